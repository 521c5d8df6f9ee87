//! The policy: the embedded default file, deny matching, scope and build-output glob semantics, and
//! every strict-config error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use guard::output::json_v1::ExclusionList;
use guard::policy::{DEFAULT_POLICY_YAML, Limits, MAX_POLICY_BYTES, Policy, PolicyError, Scope};
use std::collections::BTreeSet;

fn default_policy() -> Policy {
    Policy::embedded_default().expect("the embedded default policy loads")
}

fn patterns(policy: &Policy) -> Vec<&str> {
    policy.deny.iter().map(|p| p.pattern()).collect()
}

fn err(yaml: &str) -> PolicyError {
    match Policy::from_yaml(yaml) {
        Ok(_) => panic!("accepted:\n{yaml}"),
        Err(e) => e,
    }
}

// ---- the default file ----

#[test]
fn load_beside_runs_with_the_file_limits_and_not_after_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yml");
    std::fs::write(&good, "version: 1\nlimits:\n  diff-bytes: 1000\n").unwrap();
    let (policy, seen) = Policy::load_beside(Some(&good), |limits| limits.max_diff_bytes).unwrap();
    assert_eq!((seen, policy.limits.max_diff_bytes), (1000, 1000));
    assert_eq!(patterns(&policy), patterns(&default_policy()));
    let (embedded, seen) = Policy::load_beside(None, |limits| *limits).unwrap();
    assert_eq!(seen, default_policy().limits);
    assert_eq!(embedded.limits, seen);

    let bad = dir.path().join("bad.yml");
    std::fs::write(&bad, "version: 1\ndeny:\n  - \"a[\"\n").unwrap();
    let mut ran = false;
    let e = Policy::load_beside(Some(&bad), |_| ran = true).unwrap_err();
    assert!(!ran, "ran beside a policy that does not load");
    assert!(e.starts_with(&format!("policy {}: ", bad.display())), "{e}");
}

#[test]
fn default_file_loads_with_documented_values() {
    let p = default_policy();
    assert_eq!(
        p.limits,
        Limits {
            max_diff_bytes: 64 * 1024 * 1024,
            max_files: 10_000,
            max_path_bytes: 4096,
            max_component_bytes: 255,
            max_line_bytes: 1024 * 1024,
            max_path_components: 128,
        }
    );
    assert!(!p.allow_executable);
    assert!(!p.allow_mode_change);
    assert!(p.portable_paths);
    assert!(p.env_allow.is_empty());
    let outputs: Vec<&str> = p.build_output.iter().map(|b| b.pattern()).collect();
    assert_eq!(outputs, ["target/**"]);
}

#[test]
fn default_file_is_the_embedded_text() {
    let on_disk = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/default-policy.yml"
    ))
    .unwrap();
    assert_eq!(on_disk, DEFAULT_POLICY_YAML);
}

#[test]
fn default_denylist_holds_every_required_entry() {
    let p = default_policy();
    let have: BTreeSet<&str> = patterns(&p).into_iter().collect();
    let required = [
        ".github/**",
        "**/CODEOWNERS",
        "**/.gitmodules",
        "**/.gitattributes",
        "**/.lfsconfig",
        ".gitlab-ci.yml",
        ".gitlab/**",
        ".circleci/**",
        "**/Jenkinsfile",
        ".travis.yml",
        "azure-pipelines.yml",
        ".azure-pipelines/**",
        "bitbucket-pipelines.yml",
        ".buildkite/**",
        ".drone.yml",
        "appveyor.yml",
        ".appveyor.yml",
        ".cirrus.yml",
        ".woodpecker/**",
        ".woodpecker.yml",
        ".tekton/**",
        ".semaphore/**",
        ".teamcity/**",
        ".gitea/**",
        ".forgejo/**",
        "cloudbuild.yaml",
        "buildspec.yml",
        "codemagic.yaml",
        "bitrise.yml",
        "renovate.json",
        "renovate.json5",
        ".renovaterc*",
        ".snyk",
        ".mergify.yml",
        ".mergify/**",
        ".devcontainer/**",
        ".husky/**",
        ".pre-commit-config.yaml",
        "lefthook.yml",
        ".vscode/tasks.json",
        "**/*.tf",
        "**/*.tf.json",
        "**/*.tfvars",
        "**/*.hcl",
        "**/cdk.json",
        "**/cdk.context.json",
        "**/template.yaml",
        "**/template.yml",
        "**/samconfig.toml",
        "**/*.cfn.{yaml,yml,json}",
        "**/cloudformation/**",
        "**/Pulumi.yaml",
        "**/Pulumi.*.yaml",
        "**/serverless.yml",
        "**/*.bicep",
        "**/iam/**",
        "**/*.iam.json",
        ".agent-team/**",
    ];
    for r in required {
        assert!(have.contains(r), "default denylist lacks {r}");
    }
    assert_eq!(
        have.len(),
        patterns(&p).len(),
        "no duplicate default entries"
    );
}

// ---- deny matching ----

/// (path, the first deny pattern expected to match). Case variants and any-depth variants included.
const DENIED: &[(&str, &str)] = &[
    // GitHub
    (".github/workflows/ci.yml", ".github/**"),
    (".github", ".github/**"),
    (".GitHub/Workflows/x.yml", ".github/**"),
    (".GITHUB/WORKFLOWS/CI.YML", ".github/**"),
    (".github/CODEOWNERS", ".github/**"),
    (".github/dependabot.yml", ".github/**"),
    (".github/renovate.json", ".github/**"),
    (".github/actions/setup/action.yml", ".github/**"),
    ("CODEOWNERS", "**/CODEOWNERS"),
    ("docs/CODEOWNERS", "**/CODEOWNERS"),
    ("a/b/codeowners", "**/CODEOWNERS"),
    ("Docs/CodeOwners", "**/CODEOWNERS"),
    (".gitlab/CODEOWNERS", "**/CODEOWNERS"),
    ("action.yml", "**/action.yml"),
    ("tools/setup/action.yaml", "**/action.yaml"),
    ("tools/setup/Action.YML", "**/action.yml"),
    // git
    (".gitmodules", "**/.gitmodules"),
    ("vendor/lib/.gitmodules", "**/.gitmodules"),
    (".GitModules", "**/.gitmodules"),
    (".gitattributes", "**/.gitattributes"),
    ("sub/dir/.gitattributes", "**/.gitattributes"),
    (".lfsconfig", "**/.lfsconfig"),
    // other CI
    (".gitlab-ci.yml", ".gitlab-ci.yml"),
    (".gitlab/ci/build.yml", ".gitlab/**"),
    (".circleci/config.yml", ".circleci/**"),
    ("Jenkinsfile", "**/Jenkinsfile"),
    ("ci/release/Jenkinsfile", "**/Jenkinsfile"),
    ("JENKINSFILE", "**/Jenkinsfile"),
    (".travis.yml", ".travis.yml"),
    ("azure-pipelines.yml", "azure-pipelines.yml"),
    (".azure-pipelines/build.yml", ".azure-pipelines/**"),
    ("bitbucket-pipelines.yml", "bitbucket-pipelines.yml"),
    (".buildkite/pipeline.yml", ".buildkite/**"),
    (".drone.yml", ".drone.yml"),
    ("appveyor.yml", "appveyor.yml"),
    (".appveyor.yml", ".appveyor.yml"),
    (".cirrus.yml", ".cirrus.yml"),
    (".woodpecker/build.yml", ".woodpecker/**"),
    (".woodpecker.yml", ".woodpecker.yml"),
    (".tekton/push.yaml", ".tekton/**"),
    (".semaphore/semaphore.yml", ".semaphore/**"),
    (".teamcity/settings.kts", ".teamcity/**"),
    (".gitea/workflows/ci.yml", ".gitea/**"),
    (".forgejo/workflows/ci.yml", ".forgejo/**"),
    ("cloudbuild.yaml", "cloudbuild.yaml"),
    ("buildspec.yml", "buildspec.yml"),
    ("codemagic.yaml", "codemagic.yaml"),
    ("bitrise.yml", "bitrise.yml"),
    ("Bitrise.YML", "bitrise.yml"),
    // dependency bots
    ("renovate.json", "renovate.json"),
    ("renovate.json5", "renovate.json5"),
    (".renovaterc", ".renovaterc*"),
    (".renovaterc.json", ".renovaterc*"),
    (".snyk", ".snyk"),
    (".mergify.yml", ".mergify.yml"),
    (".mergify/config.yml", ".mergify/**"),
    // dev-environment hooks
    (".devcontainer/devcontainer.json", ".devcontainer/**"),
    (".devcontainer/x/Dockerfile", ".devcontainer/**"),
    (".devcontainer.json", ".devcontainer.json"),
    (".husky/pre-commit", ".husky/**"),
    (".pre-commit-config.yaml", ".pre-commit-config.yaml"),
    ("lefthook.yml", "lefthook.yml"),
    (".vscode/tasks.json", ".vscode/tasks.json"),
    (".VSCode/Tasks.JSON", ".vscode/tasks.json"),
    // infrastructure as code and IAM
    ("main.tf", "**/*.tf"),
    ("infra/prod/main.tf", "**/*.tf"),
    ("MAIN.TF", "**/*.tf"),
    ("infra/main.tf.json", "**/*.tf.json"),
    ("prod.tfvars", "**/*.tfvars"),
    ("live/terragrunt.hcl", "**/*.hcl"),
    ("cdk.json", "**/cdk.json"),
    ("app/cdk.context.json", "**/cdk.context.json"),
    ("template.yaml", "**/template.yaml"),
    ("sam/template.yml", "**/template.yml"),
    ("samconfig.toml", "**/samconfig.toml"),
    ("stack.cfn.yaml", "**/*.cfn.{yaml,yml,json}"),
    ("a/stack.cfn.yml", "**/*.cfn.{yaml,yml,json}"),
    ("a/b/stack.CFN.json", "**/*.cfn.{yaml,yml,json}"),
    ("cloudformation/vpc.json", "**/cloudformation/**"),
    ("deploy/CloudFormation/a/b.yaml", "**/cloudformation/**"),
    ("Pulumi.yaml", "**/Pulumi.yaml"),
    ("infra/Pulumi.prod.yaml", "**/Pulumi.*.yaml"),
    ("serverless.yml", "**/serverless.yml"),
    ("svc/main.bicep", "**/*.bicep"),
    ("iam/policy.json", "**/iam/**"),
    ("infra/IAM/role.json", "**/iam/**"),
    ("iam", "**/iam/**"),
    ("infra/iam", "**/iam/**"),
    ("roles/deploy.iam.json", "**/*.iam.json"),
    // this tool
    (".agent-team/policy.yml", ".agent-team/**"),
    (".agent-team", ".agent-team/**"),
    // further spellings each tool reads (see DENYLIST_SPELLINGS for the sources)
    ("buildkite.yaml", "buildkite.{yml,yaml,json}"),
    (
        "buildkite/pipeline.json",
        "buildkite/pipeline.{yml,yaml,json}",
    ),
    (".drone.star", ".drone.star"),
    (".drone.jsonnet", ".drone.jsonnet"),
    (".cirrus.star", ".cirrus.star"),
    (".woodpecker.yaml", ".woodpecker.yaml"),
    ("cloudbuild.json", "cloudbuild.{yml,json}"),
    (".mergify.yaml", ".mergify.yaml"),
    (".huskyrc.json", ".huskyrc*"),
    ("husky.config.js", "husky.config.js"),
    (".pre-commit-hooks.yaml", ".pre-commit-hooks.yaml"),
    (
        ".lefthook-local.jsonc",
        "{lefthook,.lefthook,lefthook-local,.lefthook-local}{.yml,.yaml,.toml,.json,.jsonc}",
    ),
    (
        ".config/lefthook.toml",
        ".config/{lefthook,.lefthook,lefthook-local,.lefthook-local}{.yml,.yaml,.toml,.json,.jsonc}",
    ),
    (".lefthook/pre-commit/x.sh", ".lefthook/**"),
    (".lefthook-local/pre-push/x.sh", ".lefthook-local/**"),
    ("team.code-workspace", "**/*.code-workspace"),
    ("prod.tfvars.json", "**/*.tfvars.json"),
    ("tests/x.tftest.json", "**/*.tftest.json"),
    ("main.tofu", "**/*.tofu"),
    ("main.tofu.json", "**/*.tofu.json"),
    ("terragrunt.hcl.json", "**/*.hcl.json"),
    ("app.pkr.json", "**/*.pkr.json"),
    ("jobs/web.nomad", "**/*.nomad"),
    ("sam/template.json", "**/template.json"),
    ("samconfig.yaml", "**/samconfig.{yaml,yml}"),
    ("Pulumi.yml", "**/Pulumi.yml"),
    ("infra/Pulumi.prod.yml", "**/Pulumi.*.yml"),
    ("svc/serverless.ts", "**/serverless.{yaml,json,js,ts}"),
    ("main.bicepparam", "**/*.bicepparam"),
    ("bicepconfig.json", "**/bicepconfig.json"),
];

/// Near misses that must NOT be denied.
const NOT_DENIED: &[&str] = &[
    "src/lib.rs",
    "README.md",
    "Cargo.toml",
    "src/github.rs",
    "github/workflows/ci.yml",
    ".github.md",
    ".githubx/workflows/ci.yml",
    "x/.github/workflows/ci.yml",
    "docs/codeowners.md",
    "CODEOWNERS.md",
    "CODEOWNERS/x",
    "src/action.rs",
    "action.yml.md",
    ".gitignore",
    ".git-blame-ignore-revs",
    "gitmodules",
    ".gitmodules.orig",
    "src/gitlab-ci.yml",
    "docs/.travis.yml",
    "Jenkinsfile.md",
    "config/renovate.json",
    "renovate.json.bak",
    "docs/.circleci/config.yml",
    ".vscode/settings.json",
    "terraform.md",
    "main.tf.md",
    "src/tf.rs",
    "docs/hcl.md",
    "src/iam_helpers.rs",
    "src/iam.rs",
    "docs/iam.md",
    "iam.json",
    "templates/site.yaml",
    "template.yaml.bak",
    "src/serverless.rs",
    "Pulumi.md",
    "cdk.jsonc",
    "agent-team/x",
    "target/debug/build/x",
    // near misses of the further spellings
    "docs/lefthook.md",
    "src/lefthook.rs",
    "config/lefthook.yml",
    "src/buildkite.rs",
    "docs/buildkite.yml",
    "docs/tofu.md",
    "src/nomad.rs",
    "docs/template.md",
    "src/serverless_util.ts",
    "workspace.code",
    ".huskyignore",
];

#[test]
fn deny_table() {
    let p = default_policy();
    for (path, want) in DENIED {
        assert_eq!(p.denied(path), Some(*want), "path {path:?}");
    }
    for path in NOT_DENIED {
        assert_eq!(p.denied(path), None, "path {path:?} must not be denied");
    }
}

#[test]
fn every_default_deny_entry_is_witnessed_by_the_table() {
    let p = default_policy();
    let witnessed: BTreeSet<&str> = DENIED.iter().map(|(_, want)| *want).collect();
    for pattern in patterns(&p) {
        assert!(witnessed.contains(pattern), "no DENIED row for {pattern}");
    }
}

#[test]
fn deny_entry_matches_directory_itself_but_scope_and_build_output_do_not() {
    let p = default_policy();
    assert_eq!(p.denied(".circleci"), Some(".circleci/**"));
    assert_eq!(p.denied(".Husky"), Some(".husky/**"));
    assert!(!p.is_build_output("target"));
    let scope = Scope::new(&["src/**".to_owned()]).unwrap();
    assert_eq!(scope.matching("src"), None);
}

#[test]
fn build_output_is_case_sensitive_and_below_its_directory() {
    let p = default_policy();
    assert!(p.is_build_output("target/debug/guard"));
    assert!(p.is_build_output("target/a/b/c/d"));
    assert!(!p.is_build_output("Target/debug/guard"));
    assert!(!p.is_build_output("src/target/x"));
    assert!(!p.is_build_output("targetx/y"));
}

// ---- scope ----

fn scope(globs: &[&str]) -> Scope {
    Scope::new(&globs.iter().map(|g| (*g).to_owned()).collect::<Vec<_>>()).unwrap()
}

#[test]
fn scope_star_does_not_cross_slash() {
    let s = scope(&["src/*"]);
    assert_eq!(s.matching("src/lib.rs"), Some("src/*"));
    assert_eq!(s.matching("src/a/lib.rs"), None);
    assert_eq!(s.matching("src"), None);
    assert_eq!(s.matching("lib.rs"), None);

    let s = scope(&["*.md"]);
    assert_eq!(s.matching("README.md"), Some("*.md"));
    assert_eq!(s.matching("docs/a.md"), None);

    let s = scope(&["src/?.rs"]);
    assert_eq!(s.matching("src/a.rs"), Some("src/?.rs"));
    assert_eq!(s.matching("src/ab.rs"), None);
}

#[test]
fn scope_double_star_crosses_slash() {
    let s = scope(&["src/**"]);
    for path in ["src/lib.rs", "src/a/b/c.rs", "src/.hidden"] {
        assert_eq!(s.matching(path), Some("src/**"), "{path}");
    }
    for path in ["src", "srcx/a.rs", "x/src/a.rs"] {
        assert_eq!(s.matching(path), None, "{path}");
    }
    let s = scope(&["**/*.rs"]);
    assert_eq!(s.matching("lib.rs"), Some("**/*.rs"));
    assert_eq!(s.matching("a/b/lib.rs"), Some("**/*.rs"));
    assert_eq!(s.matching("a/b/lib.rsx"), None);
    let s = scope(&["crates/**/tests/*.rs"]);
    assert_eq!(
        s.matching("crates/tests/a.rs"),
        Some("crates/**/tests/*.rs")
    );
    assert_eq!(
        s.matching("crates/x/y/tests/a.rs"),
        Some("crates/**/tests/*.rs")
    );
    assert_eq!(s.matching("crates/x/tests/sub/a.rs"), None);
}

#[test]
fn scope_is_case_sensitive() {
    let s = scope(&["src/**", "README.md"]);
    assert_eq!(s.matching("Src/lib.rs"), None);
    assert_eq!(s.matching("SRC/lib.rs"), None);
    assert_eq!(s.matching("readme.md"), None);
    assert_eq!(s.matching("README.md"), Some("README.md"));
}

#[test]
fn scope_alternatives_classes_and_escapes() {
    let s = scope(&["src/*.{rs,toml}"]);
    assert!(s.matching("src/a.rs").is_some());
    assert!(s.matching("src/b.toml").is_some());
    assert!(s.matching("src/c.md").is_none());
    let s = scope(&["v[0-9].txt"]);
    assert!(s.matching("v1.txt").is_some());
    assert!(s.matching("va.txt").is_none());
    let s = scope(&[r"docs/\*.md"]);
    assert_eq!(s.matching("docs/*.md"), Some(r"docs/\*.md"));
    assert_eq!(s.matching("docs/a.md"), None);
}

#[test]
fn scope_reports_first_matching_glob_and_round_trips() {
    let s = scope(&["docs/**", "src/**", "src/*.rs"]);
    assert_eq!(s.matching("src/lib.rs"), Some("src/**"));
    assert_eq!(s.globs(), ["docs/**", "src/**", "src/*.rs"]);
    assert!(!s.is_empty());
}

#[test]
fn empty_scope_matches_nothing() {
    let s = Scope::new(&[]).unwrap();
    assert!(s.is_empty());
    assert!(s.globs().is_empty());
    assert_eq!(s.matching("src/lib.rs"), None);
}

#[test]
fn scope_rejects_invalid_and_unsafe_globs() {
    let bad = [
        ("", "empty"),
        ("/src/**", "starts with `/`"),
        ("//x", "starts with `/`"),
        ("../x", "`..`"),
        ("src/../x", "`..`"),
        ("src/..", "`..`"),
        ("{..,src}/**", "`..`"),
        ("./src/**", "`.`"),
        ("src/./a", "`.`"),
        ("a//b", "empty path component"),
        ("src/", "ends with `/`"),
        (r"src\a", "backslash"),
        (r"src\\x", "backslash"),
        (r"src\/x", "backslash"),
        ("src\\", "dangling backslash"),
        ("a\tb", "control character"),
        ("a\nb", "control character"),
        ("a/[", "unclosed character class"),
        ("src/{a,b", "unclosed alternate"),
    ];
    for (glob, why) in bad {
        let globs = vec!["ok/**".to_owned(), glob.to_owned()];
        match Scope::new(&globs) {
            Err(e @ PolicyError::InvalidGlob { .. }) => {
                let PolicyError::InvalidGlob {
                    entry,
                    pattern,
                    reason,
                } = &e
                else {
                    unreachable!()
                };
                assert_eq!(entry, "scope[1]", "{glob:?}");
                assert_eq!(pattern, glob);
                assert!(reason.contains(why), "{glob:?}: {reason}");
                assert!(e.to_string().starts_with("scope[1]: invalid glob "), "{e}");
            }
            other => panic!("{glob:?}: {other:?}"),
        }
    }
    let long = "a".repeat(5000);
    assert!(matches!(
        Scope::new(&[long]),
        Err(PolicyError::InvalidGlob { .. })
    ));
}

// ---- user policy files ----

#[test]
fn minimal_user_policy_is_the_default() {
    let user = Policy::from_yaml("version: 1\n").unwrap();
    let default = default_policy();
    assert_eq!(patterns(&user), patterns(&default));
    assert_eq!(user.limits, default.limits);
    assert_eq!(user.allow_executable, default.allow_executable);
    assert_eq!(user.allow_mode_change, default.allow_mode_change);
    assert_eq!(user.portable_paths, default.portable_paths);
}

#[test]
fn portable_paths_is_an_explicit_switch() {
    assert!(Policy::from_yaml("version: 1\n").unwrap().portable_paths);
    assert!(
        !Policy::from_yaml("version: 1\nportable-paths: false\n")
            .unwrap()
            .portable_paths
    );
    assert!(matches!(
        err("version: 1\nportable-paths: \"false\"\n"),
        PolicyError::Yaml { .. }
    ));
}

#[test]
fn an_empty_brace_alternative_is_refused_because_it_never_matches() {
    for bad in ["lefthook{,-local}.yml", "{,.}x", "a{b,}c", "{a,,b}"] {
        match err(&format!("version: 1\ndeny:\n  add: [\"{bad}\"]\n")) {
            PolicyError::InvalidGlob { entry, reason, .. } => {
                assert_eq!(entry, "deny.add[0]", "{bad}");
                assert!(reason.contains("empty `{}` alternative"), "{bad}: {reason}");
            }
            other => panic!("{bad}: {other}"),
        }
    }
    assert!(
        Policy::from_yaml("version: 1\ndeny:\n  add: [\"{a,a-local}.yml\", \"x\\\\,y\"]\n").is_ok()
    );
}

#[test]
fn module_doc_example_parses() {
    let yaml = r#"
version: 1                          # required; only 1 exists
deny:
  add: ["gate/**", "guard/**"]      # appended to the default denylist
allow:
  executable-files: false           # true allows new files with mode 100755
  mode-changes: false               # true allows old mode != new mode
limits:                             # each 1 ..= the default value
  diff-bytes: 67108864
  files: 10000
  path-bytes: 4096
  component-bytes: 255
  line-bytes: 1048576
build:
  output: ["target/**"]             # appended to the default build outputs
  env: ["CARGO_HOME"]               # appended to the default env allowlist
"#;
    let p = Policy::from_yaml(yaml).unwrap();
    assert_eq!(p.denied("gate/src/main.rs"), Some("gate/**"));
    assert_eq!(p.env_allow, ["CARGO_HOME"]);
}

#[test]
fn extending_deny_keeps_the_default() {
    let p = Policy::from_yaml("version: 1\ndeny:\n  add: [\"gate/**\", \"guard/**\"]\n").unwrap();
    assert_eq!(p.denied("gate/src/lib.rs"), Some("gate/**"));
    assert_eq!(p.denied("Guard/Cargo.toml"), Some("guard/**"));
    assert_eq!(p.denied("gate"), Some("gate/**"));
    assert_eq!(p.denied(".github/workflows/ci.yml"), Some(".github/**"));
    assert_eq!(p.deny.len(), default_policy().deny.len() + 2);
    // Defaults come first, so a path matched by both reports the default entry.
    let p = Policy::from_yaml("version: 1\ndeny:\n  add: [\".github/workflows/**\"]\n").unwrap();
    assert_eq!(p.denied(".github/workflows/ci.yml"), Some(".github/**"));
}

#[test]
fn default_deny_cannot_be_removed() {
    for key in ["remove", "replace", "default", "clear"] {
        let e = err(&format!("version: 1\ndeny:\n  {key}: [\".github/**\"]\n"));
        assert!(
            matches!(e, PolicyError::Yaml { line: 3, .. }),
            "{key}: {e:?}"
        );
        assert!(
            e.to_string().contains(&format!("unknown field `{key}`")),
            "{e}"
        );
    }
    // An empty add list, or a top-level deny list, does not clear anything.
    let p = Policy::from_yaml("version: 1\ndeny:\n  add: []\n").unwrap();
    assert_eq!(p.denied(".github/workflows/ci.yml"), Some(".github/**"));
    assert!(matches!(
        err("version: 1\ndeny: []\n"),
        PolicyError::Yaml { .. }
    ));
    assert!(matches!(
        err("version: 1\ndeny: ~\n"),
        PolicyError::Yaml { .. }
    ));
}

#[test]
fn allow_is_explicit_loosening() {
    let p = Policy::from_yaml("version: 1\nallow:\n  executable-files: true\n").unwrap();
    assert!(p.allow_executable);
    assert!(!p.allow_mode_change);
    let p = Policy::from_yaml("version: 1\nallow: {mode-changes: true}\n").unwrap();
    assert!(!p.allow_executable);
    assert!(p.allow_mode_change);
}

#[test]
fn limits_can_be_lowered() {
    let p = Policy::from_yaml(
        "version: 1\nlimits:\n  diff-bytes: 1000\n  files: 5\n  path-bytes: 100\n  component-bytes: 50\n  line-bytes: 200\n  path-components: 12\n",
    )
    .unwrap();
    assert_eq!(
        p.limits,
        Limits {
            max_diff_bytes: 1000,
            max_files: 5,
            max_path_bytes: 100,
            max_component_bytes: 50,
            max_line_bytes: 200,
            max_path_components: 12,
        }
    );
    let p = Policy::from_yaml("version: 1\nlimits: {files: 10000}\n").unwrap();
    assert_eq!(p.limits.max_files, 10_000);
}

#[test]
fn build_outputs_and_env_extend() {
    let p = Policy::from_yaml(
        "version: 1\nbuild:\n  output: [\"out/**\"]\n  env: [CARGO_HOME, RUSTUP_HOME, CARGO_HOME]\n",
    )
    .unwrap();
    assert!(p.is_build_output("target/x"));
    assert!(p.is_build_output("out/x"));
    assert_eq!(p.env_allow, ["CARGO_HOME", "RUSTUP_HOME"]);
}

// ---- strict-config errors ----

#[test]
fn unknown_key_at_every_level_is_an_error_with_its_location() {
    let cases = [
        ("version: 1\nfoo: 1\n", "foo", 2),
        ("version: 1\ndeny:\n  add: []\n  bar: 1\n", "bar", 4),
        ("version: 1\nallow:\n  executable: true\n", "executable", 3),
        (
            "version: 1\nallow:\n  executable_files: true\n",
            "executable_files",
            3,
        ),
        ("version: 1\nlimits:\n  files: 1\n  bytes: 1\n", "bytes", 4),
        ("version: 1\nbuild:\n  outputs: []\n", "outputs", 3),
        ("version: 1\nDeny: {}\n", "Deny", 2),
    ];
    for (yaml, key, want_line) in cases {
        let e = err(yaml);
        let PolicyError::Yaml {
            line,
            column,
            message,
        } = &e
        else {
            panic!("{yaml}: {e:?}")
        };
        assert_eq!(*line, want_line, "{yaml}");
        assert!(*column > 0);
        assert!(
            message.contains(&format!("unknown field `{key}`")),
            "{message}"
        );
        assert!(
            e.to_string().contains(&format!("line {want_line} column")),
            "{e}"
        );
    }
}

#[test]
fn version_is_required_and_must_be_1() {
    for (yaml, found) in [
        ("version: 2\n", 2),
        ("version: 0\n", 0),
        ("version: 100\n", 100),
    ] {
        let e = err(yaml);
        assert!(
            matches!(e, PolicyError::UnsupportedVersion { found: f } if f == found),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("version: "), "{e}");
    }
    for yaml in ["deny: {add: []}\n", "", "# only a comment\n"] {
        assert!(matches!(err(yaml), PolicyError::Yaml { .. }), "{yaml:?}");
    }
    let e = err("deny: {add: []}\n");
    assert!(e.to_string().contains("version"), "{e}");
}

#[test]
fn wrong_types_are_errors() {
    let cases = [
        "version: '1'\n",
        "version: \"1\"\n",
        "version: 1.0\n",
        "version: -1\n",
        "version: [1]\n",
        "version: 1\nallow:\n  executable-files: yes\n",
        "version: 1\nallow:\n  executable-files: 'true'\n",
        "version: 1\nallow:\n  mode-changes: 1\n",
        "version: 1\nlimits:\n  files: many\n",
        "version: 1\nlimits:\n  files: '100'\n",
        "version: 1\nlimits:\n  files: -5\n",
        "version: 1\nlimits:\n  line-bytes: 1.5\n",
        "version: 1\nlimits:\n  diff-bytes: 99999999999999999999999\n",
        "version: 1\ndeny:\n  add: {a: b}\n",
        "version: 1\ndeny:\n  add: [[a]]\n",
        "version: 1\nbuild:\n  env: [{a: b}]\n",
        "version: 1\nlimits: [1]\n",
        "[]\n",
        "just a string\n",
    ];
    for yaml in cases {
        assert!(matches!(err(yaml), PolicyError::Yaml { .. }), "{yaml:?}");
    }
}

#[test]
fn bad_glob_names_its_entry_and_index() {
    let e = err("version: 1\ndeny:\n  add: [\"a/**\", \"b/**\", \"c\", \"a/[\"]\n");
    assert!(
        matches!(&e, PolicyError::InvalidGlob { entry, pattern, .. } if entry == "deny.add[3]" && pattern == "a/["),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("deny.add[3]: invalid glob `a/[`: "),
        "{e}"
    );

    let e = err("version: 1\ndeny:\n  add: [\"/etc/**\"]\n");
    assert!(
        matches!(&e, PolicyError::InvalidGlob { entry, .. } if entry == "deny.add[0]"),
        "{e:?}"
    );

    let e = err("version: 1\nbuild:\n  output: [\"target/**\", \"../x/**\"]\n");
    assert!(
        matches!(&e, PolicyError::InvalidGlob { entry, .. } if entry == "build.output[1]"),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("build.output[1]: "), "{e}");

    let e = err("version: 1\ndeny:\n  add: [\"\"]\n");
    assert!(
        matches!(&e, PolicyError::InvalidGlob { entry, .. } if entry == "deny.add[0]"),
        "{e:?}"
    );
}

#[test]
fn zero_limit_is_an_error_naming_the_key() {
    for key in [
        "diff-bytes",
        "files",
        "path-bytes",
        "component-bytes",
        "line-bytes",
    ] {
        let e = err(&format!("version: 1\nlimits:\n  {key}: 0\n"));
        let want = format!("limits.{key}");
        assert!(
            matches!(&e, PolicyError::ZeroLimit { key } if *key == want),
            "{e:?}"
        );
        assert_eq!(e.to_string(), format!("limits.{key}: must be at least 1"));
    }
}

#[test]
fn limit_above_default_is_an_error() {
    let cases = [
        ("diff-bytes", 67_108_865_u64, 67_108_864_u64),
        ("files", 10_001, 10_000),
        ("path-bytes", 4097, 4096),
        ("component-bytes", 256, 255),
        ("line-bytes", 1_048_577, 1_048_576),
    ];
    for (key, value, max) in cases {
        let e = err(&format!("version: 1\nlimits:\n  {key}: {value}\n"));
        let want = format!("limits.{key}");
        assert!(
            matches!(&e, PolicyError::LimitAboveDefault { key: k, value: v, max: m }
                if *k == want && *v == value && *m == max),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("limits.{key}: {value} exceeds")),
            "{e}"
        );
    }
}

#[test]
fn env_names_are_checked() {
    let bad = [
        ("", "not a variable name"),
        ("1ABC", "not a variable name"),
        ("A-B", "not a variable name"),
        ("A B", "not a variable name"),
        ("GITHUB_TOKEN", "credential"),
        ("gh_token", "credential"),
        ("NPM_AUTH_TOKEN", "credential"),
        ("AWS_SECRET_ACCESS_KEY", "credential"),
        ("DB_PASSWORD", "credential"),
        ("ACTIONS_RUNTIME_TOKEN", "runner-internal"),
        ("ACTIONS_ID_TOKEN_REQUEST_URL", "runner-internal"),
        ("RUNNER_TEMP", "runner-internal"),
    ];
    for (name, why) in bad {
        let e = err(&format!(
            "version: 1\nbuild:\n  env: [CARGO_HOME, \"{name}\"]\n"
        ));
        let PolicyError::InvalidEnvName {
            entry,
            name: n,
            reason,
        } = &e
        else {
            panic!("{name:?}: {e:?}")
        };
        assert_eq!(entry, "build.env[1]");
        assert_eq!(n, name);
        assert!(reason.contains(why), "{name}: {reason}");
        assert!(e.to_string().starts_with("build.env[1]: "), "{e}");
    }
}

#[test]
fn duplicate_keys_are_errors() {
    let cases = [
        "version: 1\nversion: 1\n",
        "version: 1\nlimits:\n  files: 1\n  files: 2\n",
        "version: 1\ndeny: {add: [a], add: [b]}\n",
    ];
    for yaml in cases {
        let e = err(yaml);
        assert!(
            matches!(e, PolicyError::Yaml { line, .. } if line > 0),
            "{yaml}: {e:?}"
        );
        assert!(e.to_string().contains("duplicate"), "{e}");
    }
}

#[test]
fn yaml_syntax_error_has_line_and_column() {
    let e = err("version: 1\ndeny:\n  add: [\"a\"\n  bad\n");
    let PolicyError::Yaml { line, column, .. } = e else {
        panic!("{e:?}")
    };
    assert!(line >= 3, "line {line}");
    assert!(column > 0);
    let e = err("version: 1\n\t- x: [\n");
    assert!(
        matches!(e, PolicyError::Yaml { line, .. } if line >= 1),
        "{e:?}"
    );
}

#[test]
fn tags_merge_keys_and_multiple_documents_are_errors() {
    let cases = [
        "version: 1\nbuild: !custom {}\n",
        "version: 1\ndeny:\n  add: [!glob \"a/**\"]\n",
        "!policy\nversion: 1\n",
        "version: 1\nallow: &a {mode-changes: true}\nbuild:\n  <<: *a\n",
        "version: 1\n<<: {allow: {}}\n",
        "version: 1\n---\nversion: 1\n",
    ];
    for yaml in cases {
        assert!(matches!(err(yaml), PolicyError::Yaml { .. }), "{yaml:?}");
    }
}

#[test]
fn alias_bombs_are_refused() {
    // Flat fan-out of aliases to one scalar stays within the schema's types, so it is the parse
    // budget (at most 100 aliases) that stops it.
    let aliases = vec!["*a"; 500].join(", ");
    let yaml = format!("version: 1\ndeny:\n  add: [&a \"x/**\", {aliases}]\n");
    let e = err(&yaml);
    assert!(matches!(&e, PolicyError::Yaml { line: 3, .. }), "{e:?}");
    assert!(e.to_string().contains("budget"), "{e}");

    // An exponential bomb needs nested sequences, which no field accepts: deserialization stops
    // at the first nested node, before any alias is expanded.
    let mut yaml = String::from("version: 1\ndeny:\n  add: [&l0 [a, a, a, a, a, a, a, a]");
    let mut prev = "l0".to_owned();
    for i in 1..12 {
        let refs = vec![format!("*{prev}"); 8].join(", ");
        yaml.push_str(&format!(", &l{i} [{refs}]"));
        prev = format!("l{i}");
    }
    yaml.push_str(&format!(", *{prev}]\n"));
    let start = std::time::Instant::now();
    let e = err(&yaml);
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    assert!(matches!(&e, PolicyError::Yaml { line: 3, .. }), "{e:?}");
    assert!(e.to_string().contains("expected string"), "{e}");

    // Aliases are otherwise allowed in moderation.
    let p =
        Policy::from_yaml("version: 1\ndeny:\n  add: [&g \"gate/**\"]\nbuild:\n  output: [*g]\n")
            .unwrap();
    assert!(p.is_build_output("gate/x"));
}

#[test]
fn oversize_input_is_refused_before_parsing() {
    let yaml = format!("version: 1\n#{}\n", "x".repeat(MAX_POLICY_BYTES));
    let e = err(&yaml);
    assert!(
        matches!(e, PolicyError::TooLarge { bytes, max } if bytes == yaml.len() && max == MAX_POLICY_BYTES),
        "{e:?}"
    );
}

#[test]
fn deep_nesting_is_refused_at_the_first_nested_node() {
    let yaml = format!(
        "version: 1\nbuild:\n  output: {}{}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(matches!(err(&yaml), PolicyError::Yaml { .. }));
}

// ---- the names each tool of the denylist reads ----

/// For every tool the default denylist covers: the configuration names its own documentation says
/// it reads (paths relative to the repository root; `<...>` parts are filled with a sample), and
/// where that documentation is. Every name must be denied. A tool that reads a configurable path
/// is listed with its documented default.
const DENYLIST_SPELLINGS: &[(&str, &str, &[&str])] = &[
    (
        "GitHub Actions, Dependabot, issue templates",
        "https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax",
        &[
            ".github/workflows/ci.yml",
            ".github/workflows/ci.yaml",
            ".github/dependabot.yml",
            ".github/dependabot.yaml",
            ".github/ISSUE_TEMPLATE/bug.md",
        ],
    ),
    (
        "GitHub / GitLab code owners",
        "https://docs.github.com/en/repositories/managing-your-repositorys-settings-and-features/customizing-your-repository/about-code-owners",
        &[
            "CODEOWNERS",
            ".github/CODEOWNERS",
            "docs/CODEOWNERS",
            ".gitlab/CODEOWNERS",
        ],
    ),
    (
        "GitHub local actions",
        "https://docs.github.com/en/actions/reference/workflows-and-actions/metadata-syntax",
        &["action.yml", "action.yaml", "tools/setup/action.yml"],
    ),
    (
        "git (submodules, attributes, LFS)",
        "https://git-scm.com/docs/gitmodules, https://git-scm.com/docs/gitattributes, https://github.com/git-lfs/git-lfs/blob/main/docs/man/git-lfs-config.adoc",
        &[
            ".gitmodules",
            ".gitattributes",
            "sub/.gitattributes",
            ".lfsconfig",
        ],
    ),
    (
        "GitLab CI/CD",
        "https://docs.gitlab.com/ci/yaml/",
        &[".gitlab-ci.yml", ".gitlab/ci/build.yml"],
    ),
    (
        "CircleCI",
        "https://circleci.com/docs/config-intro/",
        &[".circleci/config.yml"],
    ),
    (
        "Jenkins",
        "https://www.jenkins.io/doc/book/pipeline/jenkinsfile/",
        &["Jenkinsfile", "ci/Jenkinsfile"],
    ),
    (
        "Travis CI",
        "https://docs.travis-ci.com/user/customizing-the-build/",
        &[".travis.yml"],
    ),
    (
        "Azure Pipelines",
        "https://learn.microsoft.com/azure/devops/pipelines/create-first-pipeline",
        &["azure-pipelines.yml", ".azure-pipelines/build.yml"],
    ),
    (
        "Bitbucket Pipelines",
        "https://support.atlassian.com/bitbucket-cloud/docs/bitbucket-pipelines-configuration-reference/",
        &["bitbucket-pipelines.yml"],
    ),
    (
        "Buildkite (`buildkite-agent pipeline upload` default locations)",
        "https://buildkite.com/docs/agent/v3/cli-pipeline",
        &[
            "buildkite.yml",
            "buildkite.yaml",
            "buildkite.json",
            ".buildkite/pipeline.yml",
            ".buildkite/pipeline.yaml",
            ".buildkite/pipeline.json",
            "buildkite/pipeline.yml",
            "buildkite/pipeline.yaml",
            "buildkite/pipeline.json",
        ],
    ),
    (
        "Drone (YAML, Starlark, Jsonnet)",
        "https://docs.drone.io/pipeline/overview/, https://docs.drone.io/pipeline/scripting/starlark/, https://docs.drone.io/pipeline/scripting/jsonnet/",
        &[".drone.yml", ".drone.star", ".drone.jsonnet"],
    ),
    (
        "AppVeyor",
        "https://www.appveyor.com/docs/build-configuration/",
        &["appveyor.yml", ".appveyor.yml"],
    ),
    (
        "Cirrus CI (YAML and Starlark)",
        "https://cirrus-ci.org/guide/quick-start/, https://cirrus-ci.org/guide/programming-tasks/",
        &[".cirrus.yml", ".cirrus.star"],
    ),
    (
        "Woodpecker",
        "https://woodpecker-ci.org/docs/usage/workflows",
        &[
            ".woodpecker.yaml",
            ".woodpecker.yml",
            ".woodpecker/build.yaml",
            ".woodpecker/test.yml",
        ],
    ),
    (
        "Tekton Pipelines-as-Code",
        "https://pipelinesascode.com/docs/guide/authoringprs/",
        &[".tekton/push.yaml"],
    ),
    (
        "Semaphore",
        "https://docs.semaphoreci.com/using-semaphore/pipelines",
        &[".semaphore/semaphore.yml"],
    ),
    (
        "TeamCity Kotlin DSL",
        "https://www.jetbrains.com/help/teamcity/kotlin-dsl.html",
        &[".teamcity/settings.kts", ".teamcity/pom.xml"],
    ),
    (
        "Gitea Actions (also reads .github/workflows)",
        "https://docs.gitea.com/usage/actions/overview",
        &[".gitea/workflows/ci.yaml", ".github/workflows/ci.yaml"],
    ),
    (
        "Forgejo Actions",
        "https://forgejo.org/docs/latest/user/actions/",
        &[".forgejo/workflows/ci.yml"],
    ),
    (
        "Google Cloud Build (trigger autodetect, case-insensitive)",
        "https://cloud.google.com/build/docs/api/reference/rest/v1/projects.locations.triggers#BuildTrigger",
        &[
            "cloudbuild.yaml",
            "cloudbuild.yml",
            "cloudbuild.json",
            "CloudBuild.YAML",
        ],
    ),
    (
        "AWS CodeBuild",
        "https://docs.aws.amazon.com/codebuild/latest/userguide/build-spec-ref.html",
        &["buildspec.yml"],
    ),
    (
        "Codemagic",
        "https://docs.codemagic.io/yaml-basic-configuration/yaml-getting-started/",
        &["codemagic.yaml"],
    ),
    (
        "Bitrise",
        "https://devcenter.bitrise.io/en/builds/configuration-yaml.html",
        &["bitrise.yml"],
    ),
    (
        "Renovate (configuration file search order)",
        "https://docs.renovatebot.com/configuration-options/",
        &[
            "renovate.json",
            "renovate.json5",
            ".github/renovate.json",
            ".github/renovate.json5",
            ".gitlab/renovate.json",
            ".gitlab/renovate.json5",
            ".renovaterc",
            ".renovaterc.json",
            ".renovaterc.json5",
        ],
    ),
    (
        "Snyk policy",
        "https://docs.snyk.io/manage-risk/policies/the-.snyk-file",
        &[".snyk"],
    ),
    (
        "Mergify (first found of)",
        "https://docs.mergify.com/configuration/file-format/",
        &[
            ".mergify.yml",
            ".mergify.yaml",
            ".mergify/config.yml",
            ".mergify/config.yaml",
            ".github/mergify.yml",
            ".github/mergify.yaml",
        ],
    ),
    (
        "Dev Containers",
        "https://containers.dev/implementors/spec/#devcontainerjson",
        &[
            ".devcontainer/devcontainer.json",
            ".devcontainer.json",
            ".devcontainer/python/devcontainer.json",
        ],
    ),
    (
        "husky (v9 hook directory; v4 configuration files)",
        "https://typicode.github.io/husky/, https://github.com/typicode/husky/tree/v4.3.8#readme",
        &[
            ".husky/pre-commit",
            ".huskyrc",
            ".huskyrc.json",
            ".huskyrc.js",
            "husky.config.js",
        ],
    ),
    (
        "pre-commit (configuration, and hooks a repository provides)",
        "https://pre-commit.com/#plugins, https://pre-commit.com/#creating-new-hooks",
        &[".pre-commit-config.yaml", ".pre-commit-hooks.yaml"],
    ),
    (
        "lefthook (main and -local configuration, script directories)",
        "https://lefthook.dev/configuration/#config-file-name, https://lefthook.dev/configuration/source_dir.html",
        &[
            "lefthook.yml",
            ".lefthook.yml",
            ".config/lefthook.yml",
            "lefthook.yaml",
            ".lefthook.yaml",
            ".config/lefthook.yaml",
            "lefthook.toml",
            ".lefthook.toml",
            ".config/lefthook.toml",
            "lefthook.json",
            ".lefthook.json",
            ".config/lefthook.json",
            "lefthook.jsonc",
            ".lefthook.jsonc",
            ".config/lefthook.jsonc",
            "lefthook-local.yml",
            ".lefthook-local.json",
            ".config/lefthook-local.toml",
            ".lefthook/pre-commit/lint.sh",
            ".lefthook-local/pre-push/x.sh",
        ],
    ),
    (
        "VS Code tasks (folder and workspace file)",
        "https://code.visualstudio.com/docs/debugtest/tasks, https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces#_workspace-file",
        &[
            ".vscode/tasks.json",
            "project.code-workspace",
            "ws/team.code-workspace",
        ],
    ),
    (
        "Terraform",
        "https://developer.hashicorp.com/terraform/language/files, https://developer.hashicorp.com/terraform/language/values/variables#variable-definitions-tfvars-files",
        &[
            "main.tf",
            "main.tf.json",
            "prod.tfvars",
            "prod.tfvars.json",
            "x.auto.tfvars",
            "tests/x.tftest.hcl",
            "tests/x.tftest.json",
            ".terraform.lock.hcl",
        ],
    ),
    (
        "OpenTofu",
        "https://opentofu.org/docs/language/files/",
        &["main.tofu", "main.tofu.json"],
    ),
    (
        "Terragrunt",
        "https://terragrunt.gruntwork.io/docs/reference/config-blocks-and-attributes/",
        &["terragrunt.hcl", "terragrunt.hcl.json", "root.hcl"],
    ),
    (
        "Packer",
        "https://developer.hashicorp.com/packer/docs/templates/hcl_templates",
        &["app.pkr.hcl", "app.pkr.json", "vars.pkrvars.hcl"],
    ),
    (
        "Nomad",
        "https://developer.hashicorp.com/nomad/docs/job-specification",
        &["web.nomad", "web.nomad.hcl"],
    ),
    (
        "AWS CDK",
        "https://docs.aws.amazon.com/cdk/v2/guide/projects.html",
        &["cdk.json", "cdk.context.json"],
    ),
    (
        "AWS SAM (template and samconfig)",
        "https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/serverless-sam-cli-config.html",
        &[
            "template.yaml",
            "template.yml",
            "template.json",
            "samconfig.toml",
            "samconfig.yaml",
            "samconfig.yml",
        ],
    ),
    (
        "AWS CloudFormation (by convention; any name is possible)",
        "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/template-guide.html",
        &["stack.cfn.yaml", "cloudformation/vpc.json"],
    ),
    (
        "Pulumi (project and stack settings)",
        "https://www.pulumi.com/docs/iac/concepts/projects/project-file/, https://www.pulumi.com/docs/iac/concepts/projects/stack-settings-file/",
        &[
            "Pulumi.yaml",
            "Pulumi.yml",
            "Pulumi.dev.yaml",
            "Pulumi.dev.yml",
        ],
    ),
    (
        "Serverless Framework",
        "https://www.serverless.com/framework/docs/providers/aws/guide/intro",
        &[
            "serverless.yml",
            "serverless.yaml",
            "serverless.json",
            "serverless.js",
            "serverless.ts",
        ],
    ),
    (
        "Azure Bicep",
        "https://learn.microsoft.com/azure/azure-resource-manager/bicep/parameter-files, https://learn.microsoft.com/azure/azure-resource-manager/bicep/bicep-config",
        &["main.bicep", "main.bicepparam", "bicepconfig.json"],
    ),
    (
        "IAM policy documents (by convention)",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/access_policies.html",
        &["iam/role.json", "roles/deploy.iam.json"],
    ),
    ("this tool", "README.md#policy", &[".agent-team/policy.yml"]),
];

#[test]
fn every_name_each_denylisted_tool_reads_is_denied() {
    let p = default_policy();
    let mut missing = Vec::new();
    for (tool, source, names) in DENYLIST_SPELLINGS {
        assert!(!names.is_empty() && !source.is_empty(), "{tool}");
        for name in *names {
            if p.denied(name).is_none() {
                missing.push(format!("{tool}: {name} ({source})"));
            }
        }
    }
    assert!(missing.is_empty(), "not denied:\n{}", missing.join("\n"));
}

#[test]
fn the_spelling_table_witnesses_every_default_deny_entry() {
    let p = default_policy();
    let witnessed: BTreeSet<&str> = DENYLIST_SPELLINGS
        .iter()
        .flat_map(|(_, _, names)| names.iter())
        .filter_map(|n| p.denied(n))
        .collect();
    for pattern in patterns(&p) {
        assert!(
            witnessed.contains(pattern),
            "no tool in DENYLIST_SPELLINGS reads a name that {pattern} denies"
        );
    }
}

// ---- the protected tier ----

#[test]
fn default_protected_list_holds_the_documented_entries() {
    use guard::policy::Protected;
    let p = default_policy();
    assert_eq!(p.protected, Protected::Review);
    for (path, want) in [
        ("Cargo.toml", "**/Cargo.toml"),
        ("crates/x/Cargo.lock", "**/Cargo.lock"),
        ("build.rs", "**/build.rs"),
        (".cargo/config.toml", "**/.cargo/config.toml"),
        (".cargo/config", "**/.cargo/config"),
        ("rust-toolchain.toml", "**/rust-toolchain.toml"),
        ("rust-toolchain", "**/rust-toolchain"),
        ("web/package.json", "**/package.json"),
        ("package-lock.json", "**/package-lock.json"),
        ("pnpm-lock.yaml", "**/pnpm-lock.yaml"),
        ("yarn.lock", "**/yarn.lock"),
        (".npmrc", "**/.npmrc"),
        ("setup.py", "**/setup.py"),
        ("pyproject.toml", "**/pyproject.toml"),
        ("requirements-dev.txt", "**/requirements*.txt"),
        ("tests/conftest.py", "**/conftest.py"),
        ("go.mod", "**/go.mod"),
        ("Gemfile.lock", "**/Gemfile.lock"),
        ("pom.xml", "**/pom.xml"),
        (
            "gradle/wrapper/gradle-wrapper.properties",
            "**/gradle/wrapper/**",
        ),
        ("App.csproj", "**/*.csproj"),
        ("Makefile", "**/Makefile"),
        ("CMakeLists.txt", "**/CMakeLists.txt"),
        ("Dockerfile", "**/Dockerfile"),
        (".envrc", "**/.envrc"),
        ("AGENTS.md", "**/AGENTS.md"),
        ("CLAUDE.md", "**/CLAUDE.md"),
        ("GEMINI.md", "**/GEMINI.md"),
        (".cursorrules", "**/.cursorrules"),
        (".cursor/rules/style.mdc", "**/.cursor/rules/**"),
        (".claude/settings.json", "**/.claude/**"),
    ] {
        assert_eq!(p.protected_by(path), Some(want), "{path}");
    }
    for path in [
        "src/lib.rs",
        "docs/cargo.md",
        "src/build.rs.md",
        "src/makefile_parser.rs",
        "docs/agents.md.txt",
        "README.md",
    ] {
        assert_eq!(p.protected_by(path), None, "{path}");
    }
    // Every default entry is matched by some name above or by its own literal last component.
    let probes: Vec<String> = p
        .protect
        .iter()
        .map(|e| {
            e.pattern()
                .trim_start_matches("**/")
                .replace("**", "x")
                .replace('*', "x")
        })
        .collect();
    for (entry, probe) in p.protect.iter().zip(&probes) {
        assert!(
            p.protected_by(probe).is_some(),
            "{} not matched by {probe}",
            entry.pattern()
        );
    }
}

#[test]
fn protected_mode_and_list_come_from_the_policy() {
    use guard::policy::Protected;
    let p =
        Policy::from_yaml("version: 1\nprotected: block\nprotect:\n  add: [\"migrations/**\"]\n")
            .unwrap();
    assert_eq!(p.protected, Protected::Block);
    assert_eq!(p.protected_by("migrations/0001.sql"), Some("migrations/**"));
    assert_eq!(p.protected_by("Migrations"), Some("migrations/**"));
    assert_eq!(p.protect.len(), default_policy().protect.len() + 1);
    assert_eq!(
        Policy::from_yaml("version: 1\nprotected: allow\n")
            .unwrap()
            .protected,
        Protected::Allow
    );
    match err("version: 1\nprotected: maybe\n") {
        PolicyError::InvalidValue { key, value, .. } => {
            assert_eq!((key, value.as_str()), ("protected", "maybe"));
        }
        other => panic!("{other}"),
    }
    match err("version: 1\nprotect:\n  add: [\"ok/**\", \"/abs\"]\n") {
        PolicyError::InvalidGlob { entry, .. } => assert_eq!(entry, "protect.add[1]"),
        other => panic!("{other}"),
    }
    assert!(matches!(
        err("version: 1\nprotect:\n  remove: [\"x\"]\n"),
        PolicyError::Yaml { .. }
    ));
}

// ---- exclusions of default entries ----

#[test]
fn deny_exclude_removes_exactly_the_named_default_entry() {
    let p =
        Policy::from_yaml("version: 1\ndeny:\n  exclude: [\"**/*.hcl\", \"**/template.json\"]\n")
            .unwrap();
    assert_eq!(p.denied("infra/main.hcl"), None);
    assert_eq!(p.denied("app/template.json"), None);
    // Every other default entry stays, in order.
    let default = default_policy();
    let mut expected = patterns(&default);
    expected.retain(|e| *e != "**/*.hcl" && *e != "**/template.json");
    assert_eq!(patterns(&p), expected);
    assert_eq!(p.denied("main.tf"), Some("**/*.tf"));
    assert_eq!(p.denied(".github/workflows/ci.yml"), Some(".github/**"));
    let shown: Vec<(ExclusionList, &str)> = p
        .exclusions
        .iter()
        .map(|e| (e.list, e.pattern.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (ExclusionList::Deny, "**/*.hcl"),
            (ExclusionList::Deny, "**/template.json")
        ]
    );
    // Nothing excluded: nothing shown.
    assert!(default_policy().exclusions.is_empty());
    assert!(
        Policy::from_yaml("version: 1\n")
            .unwrap()
            .exclusions
            .is_empty()
    );
}

#[test]
fn protect_exclude_removes_a_default_protected_entry() {
    let p =
        Policy::from_yaml("version: 1\nprotect:\n  exclude: [\"**/CMakeLists.txt\"]\n").unwrap();
    assert_eq!(p.protected_by("src/CMakeLists.txt"), None);
    assert_eq!(p.protected_by("Cargo.toml"), Some("**/Cargo.toml"));
    assert_eq!(p.protect.len(), default_policy().protect.len() - 1);
    assert_eq!(
        p.exclusions
            .iter()
            .map(|e| (e.list, e.pattern.as_str()))
            .collect::<Vec<_>>(),
        [(ExclusionList::Protect, "**/CMakeLists.txt")]
    );
    // An entry goes, not the paths it matched: another entry still matching them stays.
    let p = Policy::from_yaml("version: 1\nprotect:\n  exclude: [\"**/Makefile\"]\n").unwrap();
    assert_eq!(p.protected_by("Makefile"), Some("**/makefile"));
}

#[test]
fn an_exclusion_must_name_a_default_entry_as_written() {
    // A pattern the default does not have, one that only matches the same paths, another
    // case, and one of the other list: each names nothing, so each is an error.
    for (yaml, entry, pattern) in [
        (
            "deny:\n  exclude: [\"**/*.HCL\"]",
            "deny.exclude[0]",
            "**/*.HCL",
        ),
        ("deny:\n  exclude: [\"*.hcl\"]", "deny.exclude[0]", "*.hcl"),
        (
            "deny:\n  exclude: [\"**/*.tf\", \"src/**\"]",
            "deny.exclude[1]",
            "src/**",
        ),
        (
            "deny:\n  exclude: [\"**/Makefile\"]",
            "deny.exclude[0]",
            "**/Makefile",
        ),
        (
            "protect:\n  exclude: [\"**/*.tf\"]",
            "protect.exclude[0]",
            "**/*.tf",
        ),
    ] {
        match err(&format!("version: 1\n{yaml}\n")) {
            PolicyError::UnknownExclusion {
                entry: e,
                pattern: p,
                ..
            } => {
                assert_eq!((e.as_str(), p.as_str()), (entry, pattern), "{yaml}");
            }
            other => panic!("{yaml}: {other:?}"),
        }
    }
    // An entry this same file adds is not a default entry.
    assert!(matches!(
        err("version: 1\ndeny:\n  add: [\"gate/**\"]\n  exclude: [\"gate/**\"]\n"),
        PolicyError::UnknownExclusion { .. }
    ));
    // Twice is a mistake, not a no-op.
    assert!(matches!(
        err("version: 1\ndeny:\n  exclude: [\"**/*.tf\", \"**/*.tf\"]\n"),
        PolicyError::DuplicateExclusion { .. }
    ));
    // Not a list of strings.
    assert!(matches!(
        err("version: 1\ndeny:\n  exclude: \"**/*.tf\"\n"),
        PolicyError::Yaml { .. }
    ));
}

#[test]
fn the_trust_control_core_cannot_be_excluded() {
    for core in [".github/**", "**/CODEOWNERS", "**/.gitmodules"] {
        let yaml = format!("version: 1\ndeny:\n  exclude: [\"{core}\"]\n");
        match err(&yaml) {
            PolicyError::CoreExclusion { entry, pattern } => {
                assert_eq!(entry, "deny.exclude[0]");
                assert_eq!(pattern, core);
            }
            other => panic!("{core}: {other:?}"),
        }
        assert!(default_policy().deny.iter().any(|p| p.pattern() == core));
    }
    assert_eq!(
        guard::policy::CORE_DENY,
        [".github/**", "**/CODEOWNERS", "**/.gitmodules"]
    );
}

#[test]
fn every_verdict_shows_the_exclusions_in_force() {
    let diff = b"diff --git a/infra/main.hcl b/infra/main.hcl\nnew file mode 100644\n--- /dev/null\n+++ b/infra/main.hcl\n@@ -0,0 +1 @@\n+x = 1\n";
    let sha = guard::hash::sha256_hex(diff);
    let scope = vec!["infra/**".to_owned()];
    let run = |policy: &Policy| {
        let verdict = guard::check::check(&guard::check::CheckRequest {
            diff,
            expected_sha256: &sha,
            scope: &scope,
            policy,
            repo: None,
        })
        .unwrap();
        guard::output::json_v1::document(&verdict)
    };
    // The default denies it.
    let doc = run(&default_policy());
    assert_eq!(doc.verdict, guard::output::json_v1::VerdictWord::Reject);
    assert_eq!(
        doc.violations[0].policy_entry.as_deref(),
        Some("deny: **/*.hcl")
    );
    assert!(doc.exclusions.is_empty());
    // Excluded: accepted, and the verdict says why it could be.
    let policy = Policy::from_yaml("version: 1\ndeny:\n  exclude: [\"**/*.hcl\"]\n").unwrap();
    let doc = run(&policy);
    assert_eq!(doc.verdict, guard::output::json_v1::VerdictWord::Accept);
    let json: serde_json::Value = serde_json::from_str(&doc.to_json().unwrap()).unwrap();
    assert_eq!(
        json["exclusions"],
        serde_json::json!([{ "list": "deny", "pattern": "**/*.hcl" }])
    );
    // The text rendering says so too.
    let verdict = guard::check::check(&guard::check::CheckRequest {
        diff,
        expected_sha256: &sha,
        scope: &scope,
        policy: &policy,
        repo: None,
    })
    .unwrap();
    let text = guard::output::text::render(&verdict);
    assert!(
        text.contains("note: policy excludes the default deny entry `**/*.hcl`"),
        "{text}"
    );
}

// ---- hints an agent can act on ----

fn verdict_of(diff: &[u8], scope: &[&str], policy: &Policy) -> guard::verdict::Verdict {
    let sha = guard::hash::sha256_hex(diff);
    let scope: Vec<String> = scope.iter().map(|s| (*s).to_owned()).collect();
    guard::check::check(&guard::check::CheckRequest {
        diff,
        expected_sha256: &sha,
        scope: &scope,
        policy,
        repo: None,
    })
    .unwrap()
}

fn verdict_doc(diff: &[u8], scope: &[&str], policy: &Policy) -> contract::verdict::VerdictDoc {
    guard::output::json_v1::document(&verdict_of(diff, scope, policy))
}

fn new_file(path: &str) -> Vec<u8> {
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"
    )
    .into_bytes()
}

#[test]
fn an_out_of_scope_path_is_told_the_scope_entries_that_would_admit_it() {
    let doc = verdict_doc(
        &new_file("docs/guide/intro.md"),
        &["src/**"],
        &default_policy(),
    );
    let v = doc
        .violations
        .iter()
        .find(|v| v.rule == contract::rules::RuleId::OutOfScope)
        .expect("out-of-scope");
    assert!(
        v.hint.contains("`docs/guide/intro.md`") && v.hint.contains("`docs/guide/**`"),
        "{}",
        v.hint
    );
    // Each suggestion, declared, admits the path.
    for scope in ["docs/guide/intro.md", "docs/guide/**"] {
        let doc = verdict_doc(
            &new_file("docs/guide/intro.md"),
            &[scope],
            &default_policy(),
        );
        assert!(doc.violations.is_empty(), "{scope}: {:?}", doc.violations);
    }
    // A top-level file: the path itself.
    let doc = verdict_doc(&new_file("NOTES.md"), &["src/**"], &default_policy());
    assert!(
        doc.violations[0].hint.contains("(`NOTES.md`)"),
        "{}",
        doc.violations[0].hint
    );
    // The text form carries it on a line of its own.
    let verdict = verdict_of(
        &new_file("docs/guide/intro.md"),
        &["src/**"],
        &default_policy(),
    );
    let text = guard::output::text::render(&verdict);
    assert!(
        text.contains("\n    hint: If the task is meant to change"),
        "{text}"
    );
}

#[test]
fn a_denied_path_is_told_no_scope_admits_it() {
    let doc = verdict_doc(
        &new_file(".github/workflows/x.yml"),
        &["src/**"],
        &default_policy(),
    );
    let hints: Vec<(&str, &str)> = doc
        .violations
        .iter()
        .map(|v| (v.rule.name(), v.hint.as_str()))
        .collect();
    let denied = hints
        .iter()
        .find(|(r, _)| *r == "denied-path")
        .expect("denied");
    assert!(
        denied.1.contains("no scope") && denied.1.contains("`.github/**`"),
        "{hints:?}"
    );
    // Out of scope too: the hint does not offer a scope entry that would not admit it.
    let scope = hints
        .iter()
        .find(|(r, _)| *r == "out-of-scope")
        .expect("scope");
    assert!(
        scope.1.contains("no scope entry admits a denied path"),
        "{hints:?}"
    );
    assert!(!scope.1.contains("/**"), "{hints:?}");
    // Even with the directory in scope, it stays denied.
    let doc = verdict_doc(
        &new_file(".github/workflows/x.yml"),
        &[".github/**"],
        &default_policy(),
    );
    assert!(
        doc.violations
            .iter()
            .any(|v| v.rule.name() == "denied-path")
    );
}

#[test]
fn a_rule_without_a_path_hint_carries_its_general_remedy() {
    let diff = b"diff --git a/src/run.sh b/src/run.sh\nnew file mode 100755\n--- /dev/null\n+++ b/src/run.sh\n@@ -0,0 +1 @@\n+x\n";
    let doc = verdict_doc(diff, &["src/**"], &default_policy());
    let v = &doc.violations[0];
    assert_eq!(v.rule, contract::rules::RuleId::ExecutableFile);
    assert_eq!(v.hint, contract::rules::RuleId::ExecutableFile.remedy());
    // A document without a hint (an older guard's) falls back to the rule's remedy.
    let mut old = v.clone();
    old.hint.clear();
    assert_eq!(old.hint_or_remedy(), v.rule.remedy());
    // A path with a backtick cannot end the hint's code span early.
    let doc = verdict_doc(&new_file("docs/a`b.md"), &["src/**"], &default_policy());
    let hint = &doc
        .violations
        .iter()
        .find(|v| v.rule.name() == "out-of-scope")
        .expect("scope")
        .hint;
    assert!(
        hint.contains("`docs/a'b.md`") && !hint.contains("a`b"),
        "{hint}"
    );
}

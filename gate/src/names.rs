//! The names a caller of the reusable workflow configures (its inputs `environment`,
//! `protected-label`, `check-run-name` and `protected-reviewers`), checked once here for every
//! command that uses them: `gate check-names` (the publish job, before the App token exists),
//! `gate publish`, `gate doctor` and `gate dispatch`. Each rule is strict: an empty or odd value
//! is refused, never trimmed or repaired.

use github::Repository;

/// The environment `publish` names by default (it holds the App key).
pub const DEFAULT_ENVIRONMENT: &str = "agent-team-publish";
/// The label a draft gets by default when protected files changed.
pub const DEFAULT_PROTECTED_LABEL: &str = "agent-team: protected files";
/// The check run `gate publish` posts by default (the required status check).
pub const DEFAULT_CHECK_RUN_NAME: &str = report::check_run::DEFAULT_CHECK_NAME;

/// Longest environment name GitHub accepts.
pub const ENVIRONMENT_MAX: usize = 255;
/// Longest label name GitHub accepts.
pub const LABEL_MAX: usize = 50;
/// Longest check run name the gate posts (report::check_run's bound).
pub const CHECK_RUN_NAME_MAX: usize = 255;
/// Most reviewers (users and teams together) the gate requests on one pull request: a bound of
/// its own, not GitHub's.
pub const REVIEWERS_MAX: usize = 15;

/// One refused name; the message says the rule and quotes the value (a display escapes it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    #[error(
        "environment {found:?} must be 1 to {ENVIRONMENT_MAX} characters of A-Z a-z 0-9 . _ -, starting with a letter or digit"
    )]
    Environment { found: String },
    #[error(
        "protected-label {found:?} must be 1 to {LABEL_MAX} characters without a control character, a comma, or white space at either end"
    )]
    Label { found: String },
    #[error(
        "check-run-name {found:?} must be 1 to {CHECK_RUN_NAME_MAX} characters without a control character or white space at either end"
    )]
    CheckRunName { found: String },
    #[error(
        "protected-reviewers entry {found:?} is neither a user login (A-Z a-z 0-9 and single inner hyphens, at most 39) nor ORG/TEAM-SLUG"
    )]
    Reviewer { found: String },
    #[error(
        "protected-reviewers team {found:?} is not of the repository's owner {owner:?} (GitHub requests teams of the owning organisation only)"
    )]
    TeamOwner { found: String, owner: String },
    #[error("protected-reviewers names {count} reviewers, at most {REVIEWERS_MAX}")]
    TooManyReviewers { count: usize },
}

/// The publication's environment (`environment:` of the publish job).
pub fn check_environment(name: &str) -> Result<(), NameError> {
    let ok = (1..=ENVIRONMENT_MAX).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(NameError::Environment {
            found: name.to_owned(),
        })
    }
}

fn plain_text(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.chars().count() <= max
        && name.trim() == name
        && !name.chars().any(char::is_control)
}

/// The label a draft gets when protected files changed.
pub fn check_label(name: &str) -> Result<(), NameError> {
    if plain_text(name, LABEL_MAX) && !name.contains(',') {
        Ok(())
    } else {
        Err(NameError::Label {
            found: name.to_owned(),
        })
    }
}

/// The check run's name (the required status check's context).
pub fn check_check_run_name(name: &str) -> Result<(), NameError> {
    if plain_text(name, CHECK_RUN_NAME_MAX) {
        Ok(())
    } else {
        Err(NameError::CheckRunName {
            found: name.to_owned(),
        })
    }
}

/// Who is asked to review a draft whose protected files changed: user logins and team slugs (of
/// the repository's owner), in the order given, without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reviewers {
    pub users: Vec<String>,
    pub teams: Vec<String>,
}

impl Reviewers {
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.teams.is_empty()
    }

    /// `octocat, org/team-name`: entries separated by commas, spaces or newlines; a user login
    /// (GitHub's rule: letters, digits and single inner hyphens, at most 39) or `ORG/TEAM-SLUG`,
    /// whose organisation must be the repository's owner. Empty: nobody.
    pub fn parse(text: &str, repository: &Repository) -> Result<Self, Vec<NameError>> {
        let mut reviewers = Reviewers::default();
        let mut errors = Vec::new();
        let entries: Vec<&str> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|e| !e.is_empty())
            .collect();
        for entry in &entries {
            match entry.split_once('/') {
                None if is_login(entry) => push_new(&mut reviewers.users, entry),
                Some((org, team)) if is_login(org) && is_team_slug(team) => {
                    if org.eq_ignore_ascii_case(repository.owner()) {
                        push_new(&mut reviewers.teams, team);
                    } else {
                        errors.push(NameError::TeamOwner {
                            found: (*entry).to_owned(),
                            owner: repository.owner().to_owned(),
                        });
                    }
                }
                _ => errors.push(NameError::Reviewer {
                    found: (*entry).to_owned(),
                }),
            }
        }
        let count = reviewers.users.len() + reviewers.teams.len();
        if count > REVIEWERS_MAX {
            errors.push(NameError::TooManyReviewers { count });
        }
        if errors.is_empty() {
            Ok(reviewers)
        } else {
            Err(errors)
        }
    }
}

fn push_new(list: &mut Vec<String>, value: &str) {
    if !list.iter().any(|v| v.eq_ignore_ascii_case(value)) {
        list.push(value.to_owned());
    }
}

/// GitHub's login rule: 1 to 39 of letters, digits and hyphens, no hyphen first, last or twice
/// in a row.
fn is_login(s: &str) -> bool {
    (1..=39).contains(&s.len())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
}

/// A team's slug as GitHub writes it: lower-case letters, digits, `-` and `_`, at most 100.
fn is_team_slug(s: &str) -> bool {
    (1..=100).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn repo() -> Repository {
        Repository::parse("octo-org/repo").unwrap()
    }

    #[test]
    fn defaults_are_valid() {
        check_environment(DEFAULT_ENVIRONMENT).unwrap();
        check_label(DEFAULT_PROTECTED_LABEL).unwrap();
        check_check_run_name(DEFAULT_CHECK_RUN_NAME).unwrap();
    }

    #[test]
    fn environments() {
        for valid in ["agent-team-publish", "prod.publish_2", "A"] {
            check_environment(valid).unwrap();
        }
        for invalid in ["", " agent-team-publish", "-x", "a b", "a/b", "ä", "x\n"] {
            assert_eq!(
                check_environment(invalid),
                Err(NameError::Environment {
                    found: invalid.into()
                })
            );
        }
        check_environment(&"e".repeat(ENVIRONMENT_MAX)).unwrap();
        assert!(check_environment(&"e".repeat(ENVIRONMENT_MAX + 1)).is_err());
    }

    #[test]
    fn labels_and_check_run_names() {
        for valid in ["agent-team: protected files", "needs review 🛡"] {
            check_label(valid).unwrap();
            check_check_run_name(valid).unwrap();
        }
        for invalid in ["", " x", "x ", "a\u{7}b", "a\nb"] {
            assert_eq!(
                check_label(invalid),
                Err(NameError::Label {
                    found: invalid.into()
                })
            );
            assert_eq!(
                check_check_run_name(invalid),
                Err(NameError::CheckRunName {
                    found: invalid.into()
                })
            );
        }
        assert!(check_label("a,b").is_err());
        check_check_run_name("a, b").unwrap();
        assert!(check_label(&"l".repeat(LABEL_MAX + 1)).is_err());
        check_label(&"l".repeat(LABEL_MAX)).unwrap();
    }

    #[test]
    fn reviewers_parse_users_and_teams_of_the_owner() {
        let r = Reviewers::parse("octocat, Octo-Org/release-team\nmona octocat", &repo()).unwrap();
        assert_eq!(r.users, ["octocat", "mona"]);
        assert_eq!(r.teams, ["release-team"]);
        assert!(Reviewers::parse("  ", &repo()).unwrap().is_empty());
    }

    #[test]
    fn malformed_reviewers_are_refused_with_their_rule() {
        for bad in [
            "-octocat",
            "octo--cat",
            "octo_cat",
            "@octocat",
            "octo-org/Team",
            "octo-org/",
            "/team",
            "a/b/c",
            "x".repeat(40).as_str(),
        ] {
            assert_eq!(
                Reviewers::parse(bad, &repo()),
                Err(vec![NameError::Reviewer { found: bad.into() }]),
                "{bad}"
            );
        }
        assert_eq!(
            Reviewers::parse("other-org/team", &repo()),
            Err(vec![NameError::TeamOwner {
                found: "other-org/team".into(),
                owner: "octo-org".into()
            }])
        );
        let many: Vec<String> = (0..=REVIEWERS_MAX).map(|i| format!("user{i}")).collect();
        assert_eq!(
            Reviewers::parse(&many.join(","), &repo()),
            Err(vec![NameError::TooManyReviewers {
                count: REVIEWERS_MAX + 1
            }])
        );
    }
}

#!/usr/bin/env bash
# Measure false rejections of `guard check` on real history.
#
# For each of the last COUNT non-merge commits reachable from a revision, produce the diff exactly
# as `git diff <parent> <commit>` writes it (canonical porcelain patch, default rename detection,
# core.quotePath=true), and run
#
#   guard check --diff <it> --expected-sha256 <its hash> --scope '**' \
#               --repo <REPO> --base <parent> --format json
#
# Every such diff is an honest change. A rejection is EXPECTED only when a rule of the design
# rejects what the commit really does: the denied surface, symlinks, gitlinks, binary files, mode
# changes, executable files, type changes, non-UTF-8 content, limits. Two rules are also accepted
# as consequences of such a finding in the same diff: git-refused when git only refuses the
# `Binary files ... differ` stubs of files flagged binary-patch, and duplicate-path/git-disagrees
# when git wrote a file<->symlink/gitlink type change as a deletion plus a creation of one path
# flagged symlink/gitlink. Anything else (malformed-diff, ambiguous-diff, git-refused,
# git-disagrees, unsafe-path, git-dir, duplicate-path, path-conflict, ...) or a guard exit 2 is a
# FALSE-REJECTION CANDIDATE: look at it, it is a bug until shown otherwise (unsafe-path can be
# right when a file name really holds a control character).
#
# Needs bash >= 4.4, git, jq, sha256sum (or shasum), GNU-compatible xargs; shuf for --random.
#
# Usage:
#   .ci/real-history.sh [options] REPO COUNT GUARD
#
#   REPO   a git repository (worktree or bare; its worktree is never read or written)
#   COUNT  number of non-merge commits to check, newest first (root commits are skipped)
#   GUARD  the guard binary, e.g. target/release/guard
#
# Options:
#   --rev REV          walk history from REV (default HEAD)
#   --random N         check a random sample of N of the COUNT newest commits (seeded by REV)
#   --commits FILE     check the commits listed in FILE (one revision a line) instead; COUNT
#                      then caps how many are read
#   --git-config K=V   extra `git -c K=V` for producing the diff (repeatable), e.g.
#                      diff.renames=false, core.quotePath=false, diff.suppressBlankEmpty=true
#   --diff-opt OPT     extra option for `git diff` (repeatable), e.g. -C, -U1
#   --policy FILE      pass a guard policy file (default: the embedded policy)
#   --expected LIST    comma-separated rule ids counted as expected rejections
#                      (default: see EXPECTED below)
#   --keep DIR         keep the diff and verdict of every rejected commit in DIR
#   -j N               run N checks at once (default 1)
#
# Exit status: 0 when there is no false-rejection candidate, 1 when there is at least one,
# 2 on a usage or setup error. No network is used; nothing in REPO is modified (the diffs are
# written to a temporary directory; guard applies them to a throwaway index only).
set -euo pipefail

EXPECTED="denied-path,symlink,gitlink,beneath-symlink,binary-patch,mode-change,executable-file,type-change,invalid-content,limit-exceeded"

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
}
die() {
    echo "real-history: $*" >&2
    exit 2
}

rev=HEAD
random=""
commits_file=""
keep=""
policy=""
jobs=1
git_cfg=()
diff_opts=()
while [[ $# -gt 0 ]]; do
    case "$1" in
    --rev) rev=${2:?}; shift 2 ;;
    --random) random=${2:?}; shift 2 ;;
    --commits) commits_file=${2:?}; shift 2 ;;
    --git-config) git_cfg+=(-c "${2:?}"); shift 2 ;;
    --diff-opt) diff_opts+=("${2:?}"); shift 2 ;;
    --policy) policy=${2:?}; shift 2 ;;
    --expected) EXPECTED=${2:?}; shift 2 ;;
    --keep) keep=${2:?}; shift 2 ;;
    -j) jobs=${2:?}; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
    esac
done
[[ $# -eq 3 ]] || usage
repo=$1 count=$2 guard=$3
[[ $count =~ ^[1-9][0-9]*$ ]] || die "COUNT must be a positive integer"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "-j needs a positive integer"
[[ -z $random || $random =~ ^[1-9][0-9]*$ ]] || die "--random needs a positive integer"
[[ -x $guard ]] || die "guard binary $guard is not executable"
guard=$(cd "$(dirname "$guard")" && pwd)/$(basename "$guard")
[[ -z $policy ]] || policy=$(cd "$(dirname "$policy")" && pwd)/$(basename "$policy")
((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) ||
    die "bash >= 4.4 is required"
for tool in git jq; do
    command -v "$tool" >/dev/null || die "$tool is required"
done
if command -v sha256sum >/dev/null; then
    SHA256="sha256sum"
elif command -v shasum >/dev/null; then
    SHA256="shasum -a 256"
else
    die "sha256sum or shasum is required"
fi
[[ -z $random ]] || command -v shuf >/dev/null || die "--random needs shuf (GNU coreutils)"
abs=$(cd "$repo" 2>/dev/null && pwd) || die "cannot enter $repo"
repo=$abs

# git for producing the diffs: the repository's own config only (no user or system config that
# could change the output format: external diff, colour, prefixes, textconv), C locale.
g() {
    env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE -u GIT_OBJECT_DIRECTORY \
        -u GIT_ALTERNATE_OBJECT_DIRECTORIES -u GIT_CONFIG_PARAMETERS -u GIT_EXTERNAL_DIFF \
        LC_ALL=C GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=/nonexistent \
        git -C "$repo" "$@"
}
g rev-parse --git-dir >/dev/null 2>&1 || die "$repo is not a git repository"
g rev-parse --verify --quiet "$rev^{commit}" >/dev/null || die "$rev names no commit in $repo"

work=$(mktemp -d "${TMPDIR:-/tmp}/real-history.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ -n $keep ]]; then
    mkdir -p "$keep"
    keep=$(cd "$keep" && pwd)
fi

# Commits: the COUNT newest non-merge commits (roots have no parent to diff against).
if [[ -n $commits_file ]]; then
    [[ -r $commits_file ]] || die "cannot read $commits_file"
    grep -v '^[[:space:]]*$' "$commits_file" | head -n "$count" | while read -r c; do
        g rev-parse --verify --quiet "$c^{commit}" || die "$c names no commit in $repo"
    done >"$work/all"
else
    g rev-list --no-merges --max-count="$count" "$rev" >"$work/all"
fi
if [[ -n $random ]]; then
    seed=$(g rev-parse "$rev^{commit}")
    shuf -n "$random" --random-source=<(yes "$seed") "$work/all" >"$work/commits"
else
    cp "$work/all" "$work/commits"
fi

# Which violations of a verdict are explained by an expected rejection. A violation is explained
# when its rule is expected, or when it is a known consequence of an expected finding in the same
# diff:
#   - git-refused whose every line of git's is git refusing a `Binary files ... differ` stub of a
#     path that carries a binary-patch violation, on either side of a rename (plain `git diff`
#     output without --binary cannot be applied);
#   - duplicate-path / git-disagrees from a type change (git writes a file <-> symlink/gitlink
#     change as a deletion plus a creation of the same path) whose path carries a symlink or
#     gitlink violation.
# Prints one line: <all rules> TAB <unexplained rules> TAB <first unexplained message>.
read -r -d '' CLASSIFY <<'JQ' || true
($expected | split(",")) as $exp
| [.violations[] | select(.rule == "binary-patch") | (.path, .old_path) | select(. != null)] as $bin
| [.violations[] | select(.rule == "symlink" or .rule == "gitlink" or .rule == "type-change")
   | .path] as $kind
| def in_set($s): . as $x | any($s[]; . == $x);
  def refused_binary_only:
    # The first line is the guard's; git's own lines follow, each behind `git: `.
    (.message | split("\n") | .[1:] | map(ltrimstr("git: "))) as $lines
    | ($bin | length > 0) and all($lines[];
        (capture("^error: cannot apply binary patch to '(?<p>.*)' without full index line$")
         // capture("^error: (?<p>.*): patch does not apply$")
         // {p: null}) | .p != null and (.p | in_set($bin)));
  def type_change_only:
    (.message | capture("^git's reading differs from the guard's: git only \\[(?<g>[^\\]]*)\\]; guard only \\[(?<o>[^\\]]*)\\]$") // null) as $m
    | if $m == null then false else
        [$m.g | split(", ")[] | (capture("^T [0-7]+->[0-7]+ (?<p>.+)$") // {p: null}) | .p] as $t
        | [$m.o | split(", ")[] | (capture("^[AD] [0-7]+->[0-7]+ (?<p>.+)$") // {p: null}) | .p] as $ad
        | ($t | length > 0) and all($t[]; . != null and in_set($kind))
          and all($ad[]; . != null and in_set($t))
      end;
  ([.violations[]
   | select((.rule | in_set($exp)) | not)
   | select((.rule == "git-refused" and refused_binary_only) | not)
   | select((.rule == "duplicate-path" and (.path | in_set($kind))) | not)
   | select((.rule == "git-disagrees" and type_change_only) | not)]
   + (if (.violations | length) == 0
      then [{rule: "no-violation", message: "rejected without a violation"}] else [] end))
  as $bad
| [([.violations[].rule] | unique | join(" ")),
   ([$bad[].rule] | unique | join(" ")),
   ($bad[0].message // "" | .[0:160] | gsub("[\t\n]"; " "))]
| join("\t")
JQ

# Microseconds since the epoch.
now_us() {
    if [[ -n ${EPOCHREALTIME:-} ]]; then
        local t=${EPOCHREALTIME/[.,]/}
        echo $((10#$t))
    else
        echo $(($(date +%s%N) / 1000))
    fi
}

# Check one commit; writes "<commit> TAB <status> TAB <ms> TAB <rules> TAB <unexplained> TAB <msg>"
# to $work/res/<commit>. Status: accepted, rejected, error (guard exit 2), or skipped-* .
check_one() {
    local c=$1 parent d v rc t0 t1 sha ms cls
    d=$work/d/$c.diff
    v=$work/d/$c.json
    parent=$(g rev-parse --verify --quiet "$c^1" || true)
    if [[ -z $parent ]]; then
        printf '%s\tskipped-root\t0\n' "$c" >"$work/res/$c"
        return
    fi
    if ! g -c core.quotePath=true -c color.ui=false "${git_cfg[@]}" \
        diff --no-color --no-ext-diff --no-textconv "${diff_opts[@]}" "$parent" "$c" -- \
        >"$d" 2>"$d.err"; then
        # e.g. a partial clone or a mirror without large blobs.
        printf '%s\tskipped-git-diff-failed\t0\n' "$c" >"$work/res/$c"
        rm -f "$d" "$d.err"
        return
    fi
    rm -f "$d.err"
    if [[ ! -s $d ]]; then
        printf '%s\tskipped-empty\t0\n' "$c" >"$work/res/$c"
        rm -f "$d"
        return
    fi
    sha=$($SHA256 "$d" | cut -d' ' -f1)
    local args=(check --diff "$d" --expected-sha256 "$sha" --scope '**'
        --repo "$repo" --base "$parent" --format json)
    [[ -z $policy ]] || args+=(--policy "$policy")
    t0=$(now_us)
    rc=0
    "$guard" "${args[@]}" >"$v" 2>"$v.err" || rc=$?
    t1=$(now_us)
    ms=$(((t1 - t0) / 1000))
    case $rc in
    0) printf '%s\taccepted\t%s\n' "$c" "$ms" >"$work/res/$c" ;;
    1)
        # A verdict that cannot be read must not pass as explained.
        cls=$(jq -r --arg expected "$EXPECTED" "$CLASSIFY" "$v" 2>/dev/null) ||
            cls=$'unreadable-verdict\tunreadable-verdict\tjq could not read the JSON verdict'
        printf '%s\trejected\t%s\t%s\n' "$c" "$ms" "$cls" >"$work/res/$c"
        ;;
    *)
        printf '%s\terror\t%s\tguard-exit-%s\tguard-exit-%s\t%s\n' "$c" "$ms" "$rc" "$rc" \
            "$(head -c 160 "$v.err" | tr '\t\n' '  ')" >"$work/res/$c"
        ;;
    esac
    if [[ $rc != 0 && -n $keep ]]; then
        cp "$d" "$keep/$c.diff"
        cat "$v" "$v.err" >"$keep/$c.verdict"
    fi
    rm -f "$d" "$v" "$v.err"
}

mkdir -p "$work/res" "$work/d"
export -f check_one g now_us
export work repo guard policy keep EXPECTED CLASSIFY SHA256
# Arrays do not cross `export`; pass them as NUL-separated files.
printf '%s\0' "${git_cfg[@]}" >"$work/git_cfg"
printf '%s\0' "${diff_opts[@]}" >"$work/diff_opts"
run_one() {
    local git_cfg=() diff_opts=()
    mapfile -d '' git_cfg <"$work/git_cfg"
    mapfile -d '' diff_opts <"$work/diff_opts"
    # An empty printf still writes one empty element.
    [[ ${#git_cfg[@]} -eq 1 && -z ${git_cfg[0]} ]] && git_cfg=()
    [[ ${#diff_opts[@]} -eq 1 && -z ${diff_opts[0]} ]] && diff_opts=()
    check_one "$1"
}
export -f run_one
xargs -P "$jobs" -I{} bash -c 'set -euo pipefail; run_one "$1"' _ {} <"$work/commits" ||
    die "a check could not run (see the messages above)"

# Summary.
declare -A by_rule=() bad_by_rule=() skipped_by=()
checked=0 accepted=0 rejected=0 errors=0 skipped=0 expected_only=0
candidates=()
times=()
while IFS=$'\t' read -r c status ms rules bad msg; do
    case $status in
    skipped-*)
        skipped=$((skipped + 1))
        skipped_by[${status#skipped-}]=$((${skipped_by[${status#skipped-}]:-0} + 1))
        continue
        ;;
    esac
    checked=$((checked + 1))
    times+=("$ms")
    case $status in
    accepted) accepted=$((accepted + 1)) ;;
    rejected | error)
        if [[ $status == rejected ]]; then rejected=$((rejected + 1)); else errors=$((errors + 1)); fi
        for r in $rules; do by_rule[$r]=$((${by_rule[$r]:-0} + 1)); done
        for r in $bad; do bad_by_rule[$r]=$((${bad_by_rule[$r]:-0} + 1)); done
        if [[ -z $bad ]]; then
            expected_only=$((expected_only + 1))
        else
            candidates+=("${c:0:12} [$bad] $msg")
        fi
        ;;
    esac
done < <(find "$work/res" -type f -exec cat {} +)
IFS=, read -r -a expected_rules <<<"$EXPECTED"
is_expected() {
    local r
    for r in "${expected_rules[@]}"; do [[ $1 == "$r" ]] && return 0; done
    return 1
}

median=0
if [[ ${#times[@]} -gt 0 ]]; then
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
fi

echo "repository:            $repo ($rev)"
echo "diff:                  git ${git_cfg[*]:+${git_cfg[*]} }diff ${diff_opts[*]:+${diff_opts[*]} }<parent> <commit>"
skip_note=""
for k in "${!skipped_by[@]}"; do skip_note+="${skip_note:+, }$k ${skipped_by[$k]}"; done
echo "commits checked:       $checked (skipped $skipped${skip_note:+: $skip_note})"
echo "accepted:              $accepted"
echo "rejected:              $rejected (explained by expected rules: $expected_only)"
echo "guard errors (exit 2): $errors"
echo "median time / commit:  ${median} ms"
if [[ ${#by_rule[@]} -gt 0 ]]; then
    echo
    printf '%-22s %8s %12s  %s\n' "rule" "commits" "unexplained" "class"
    for r in $(printf '%s\n' "${!by_rule[@]}" | sort); do
        class=expected
        is_expected "$r" || class="NOT EXPECTED"
        printf '%-22s %8d %12d  %s\n' "$r" "${by_rule[$r]}" "${bad_by_rule[$r]:-0}" "$class"
    done
fi
echo
echo "false-rejection candidates: ${#candidates[@]}"
if [[ ${#candidates[@]} -gt 0 ]]; then
    printf '  %s\n' "${candidates[@]}" | sort
    [[ -z $keep ]] || echo "(diffs and verdicts kept in $keep)"
    exit 1
fi
exit 0

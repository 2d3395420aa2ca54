#!/bin/bash
# Times the content repository's git operations at one size (docs/scale.md, "A million profiles").
#   scripts/bench/measure-content-repo.sh CONTENT_DIR WORK_DIR
# CONTENT_DIR is only read: it is the work tree of `origin.git`, a git folder outside it, committed
# in one commit (add and commit write only into that folder). `upstream.git` is a bare clone of it
# (that clone packs the loose objects, as a forge or `git gc` would), `downstream` a clone of
# upstream with its work tree: a contributor's. Edits are committed in upstream without a work tree
# (hash-object, a temporary index, commit-tree), so only downstream writes a copy of the profiles.
# Remove WORK_DIR afterwards: at 1,000,000 profiles it holds about 10 GB.
set -euo pipefail
src=$(realpath "$1"); work=$2
[ -e "$work" ] && { echo "$work exists" >&2; exit 1; }
mkdir -p "$work"; work=$(realpath "$work")
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.org GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.org
# Prints a step's wall time (s) and the peak RSS (MB) of its largest process.
t() { local label=$1; shift; /usr/bin/time -f "$label	%e s	%M" -o "$work/.t" "$@" >/dev/null 2>&1 || { cat "$work/.t"; echo "$label failed" >&2; exit 1; }; awk -F'\t' '{printf "%s\t%s\t%.0f MB\n", $1, $2, $3/1024}' "$work/.t"; }
sizes() { printf '%s\tfiles %s\tapparent %s B\tdu %s B\tinodes %s\n' "$1" "$(find "$2" -type f | wc -l)" "$(du -s --apparent-size -B1 "$2" | cut -f1)" "$(du -s -B1 "$2" | cut -f1)" "$(du -s --inodes "$2" | cut -f1)"; }

echo "git $(git --version | cut -d' ' -f3), $(nproc) cores, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
origin=(git --git-dir="$work/origin.git" --work-tree="$src")
git init -q --bare -b main "$work/origin.git"
# A bare folder used with a work tree: not bare for add and status. No automatic gc: it would run
# detached after the commit and overlap the timings below.
git --git-dir="$work/origin.git" config core.bare false
git --git-dir="$work/origin.git" config gc.auto 0
t "git add -A" "${origin[@]}" add -A
t "git commit" "${origin[@]}" commit -q -m "content"
sizes "origin.git (loose objects)" "$work/origin.git"
printf 'index\t%s B\n' "$(stat -c %s "$work/origin.git/index")"
for i in 1 2 3; do t "git status ($i)" "${origin[@]}" status --porcelain; done

t "git clone --bare --no-local (packs the loose objects)" git clone -q --bare --no-local "$work/origin.git" "$work/upstream.git"
sizes "upstream.git" "$work/upstream.git"
rm -rf "$work/origin.git"
t "git clone --no-local (a packed repository, with its work tree)" git clone -q --no-local "$work/upstream.git" "$work/downstream"
sizes "downstream (work tree and .git)" "$work/downstream"

cd "$work/downstream"
for i in 1 2; do t "git status in the fresh clone ($i)" git status --porcelain; done
first=$(git ls-files profiles | sed -n 1p)
echo "# edited" >> "$first"
t "git status, one file edited in the work tree" git status --porcelain
git checkout -q -- "$first"
t "git status -uno" git status --porcelain -uno

# Settings: each after one status that writes the index or cache it needs, then three timed.
for setting in "core.untrackedCache=true" "index.version=4" "feature.manyFiles=true"; do
  case $setting in
    core.untrackedCache=true) git config core.untrackedCache true; git update-index --untracked-cache ;;
    # Unset, git keeps the index's untracked cache: drop it, so this step measures version 4 alone.
    index.version=4) git config --unset core.untrackedCache; git update-index --no-untracked-cache --index-version 4 ;;
    feature.manyFiles=true) git config feature.manyFiles true; git update-index --untracked-cache ;;
  esac
  git status --porcelain >/dev/null
  printf 'index with %s\t%s B\n' "$setting" "$(stat -c %s .git/index)"
  for i in 1 2 3; do t "git status, $setting ($i)" git status --porcelain; done
done
git config --unset feature.manyFiles; git update-index --index-version 2

# Commits in upstream without a work tree: each listed file gets a line appended.
commit_upstream() {
  local message=$1; shift
  local index; index=$(mktemp "$work/index.XXXXXX"); rm -f "$index"
  export GIT_DIR="$work/upstream.git" GIT_INDEX_FILE="$index"
  git read-tree HEAD
  for f in "$@"; do
    printf '100644 %s\t%s\n' "$( { git cat-file blob "HEAD:$f"; echo "# edited"; } | git hash-object -w --stdin)" "$f"
  done | git update-index --index-info
  git update-ref refs/heads/main "$(git commit-tree "$(git write-tree)" -p HEAD -m "$message")"
  unset GIT_DIR GIT_INDEX_FILE; rm -f "$index"
}
commit_upstream "one profile" "$first"
t "git pull, one profile edited upstream" git pull -q --ff-only
mapfile -t some < <(git ls-files profiles | awk -v n="$(git ls-files profiles | wc -l)" 'NR % int(n / 1000) == 1 && k++ < 1000')
commit_upstream "${#some[@]} profiles" "${some[@]}"
t "git pull, ${#some[@]} profiles edited upstream" git pull -q --ff-only
t "git status after the pulls" git status --porcelain
[ -z "$(git status --porcelain)" ] && [ "$(git rev-parse HEAD)" = "$(git --git-dir="$work/upstream.git" rev-parse main)" ] || { echo "downstream is not upstream's main" >&2; exit 1; }
echo "done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"

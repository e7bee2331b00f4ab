#!/bin/bash
# make series-export: the quilt series as mail, ready for git send-email,
# in OUTDIR (build/export/), signed off by you:
#   - each patch as git format-patch names it (0001-subject.patch, cut at
#     format.filenameMaxLength, 64 by default), "[PATCH nn/NN]" in its
#     Subject, after its "---" the diffstat of the diff it carries, drawn
#     as format-patch draws one;
#   - the placeholder author 'mmlab <mmlab@localhost>' of every From: and
#     Signed-off-by: replaced by the repository's git identity (git
#     config user.name and user.email), which must be your own: unset,
#     the name "mmlab", an address at localhost, at an example domain
#     (example, .invalid, .test) or a no-reply one: exit 2, naming the fix;
#   - 0000-cover-letter.patch: PATCHES/cover-letter.txt (its Subject and
#     text, with the measured numbers), the base (trees.mk, and the
#     package's version from dpkg-query), the shortlog and the diffstat
#     of the whole series (the series applied to the files it touches,
#     taken from GITDIR's pristine tag; without that tag, the sum of the
#     patches' own diffstats, said so);
#   - then scripts/checkpatch.pl --strict of KSRC on every exported patch:
#     each "unknown commit id" warning is allowed (the tree has no
#     upstream history), any other error, warning or check fails (exit 1).
# usage: series-export.sh ROOT PATCHES OUTDIR KSRC GITDIR
# CHECKPATCH=0 exports without running checkpatch (the host tests, when
# there is no tree).
. "$(dirname "$0")/lib.sh"
set -euo pipefail
export LC_ALL=C
ROOT=$1 PATCHES=$2 OUT=$3 KSRC=$4 GITDIR=$5
PLACEHOLDER='mmlab <mmlab@localhost>'
COVER=$PATCHES/cover-letter.txt

# Your identity, as git gives it for this repository.
name=$(git -C "$ROOT" config user.name || true)
email=$(git -C "$ROOT" config user.email || true)
# placeholder NAME EMAIL: why NAME <EMAIL> cannot sign the series off
# (nothing when it can)
placeholder() {
	local name=$1 email=${2,,} domain
	domain=${email##*@}
	if [ -z "$name" ]; then echo "git config user.name is not set"
	elif [ -z "$email" ]; then echo "git config user.email is not set"
	elif [ "${name,,}" = mmlab ]; then echo "the name is the series' placeholder, mmlab"
	elif [[ $email != ?*@?* ]]; then echo "'$2' is not a mail address"
	elif [[ $domain =~ (^|\.)(localhost|localdomain|local)$ ]]; then echo "@$domain is this machine, not a mail domain"
	elif [[ $domain =~ (^|\.)(example(\.(com|net|org))?|invalid|test)$ ]]; then
		echo "@$domain is a domain reserved for examples (RFC 2606)"
	elif [[ $email =~ no-?reply ]]; then echo "'$2' is a no-reply address"
	fi
}
why=$(placeholder "$name" "$email")
[ -z "$why" ] || die "the patches would be From: and Signed-off-by: '$name <$email>': $why" \
	"git config user.name 'Your Name' && git config user.email 'you@your.domain' (in $ROOT; --global for every repository)"
ident="$name <$email>"

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" | awk '{print $1}')
total=${#patches[@]}
[ "$total" -gt 0 ] || die "the series is empty ($PATCHES/series)" "name the patches in $PATCHES/series"
[ -f "$COVER" ] && [ "$(head -1 "$COVER" | cut -c1-9)" = 'Subject: ' ] ||
	die "no cover letter text in $COVER" "write it: a 'Subject: ' line, a blank line, the text"
maxlen=$(git -C "$ROOT" config format.filenameMaxLength || echo 64)
digits=${#total}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mmlab-export.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# git on scratch repositories only: none of your configuration (a stat
# width, signing, hooks) changes what it draws or does
sgit() {
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git -C "$1" -c user.name=mmlab \
		-c user.email=mmlab@localhost -c commit.gpgsign=false "${@:2}"
}
sinit() { mkdir -p "$1" && sgit "$1" init -q; }
# fail PATCH MESSAGE FIX: a patch that cannot go out as it is (exit 1)
fail() {
	printf 'mmlab: error: %s: %s\nmmlab:   fix: %s\n' "$1" "$2" "$3" >&2
	exit 1
}

# filename N SUBJECT: git format-patch's name for patch N: the subject's
# runs of characters other than letters, digits, '.' and '_' as one '-'
# (none at either end), '..' as '.', the whole cut at maxlen with .patch
filename() {
	local s=$2 out='' c space=2 i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		if [[ $c == [A-Za-z0-9._] ]]; then
			[ $space = 1 ] && out+=-
			space=0 out+=$c
			while [ "$c" = . ] && [ "${s:i+1:1}" = . ]; do i=$((i + 1)); done
		else
			space=$((space | 1))
		fi
	done
	while [[ $out == *[.-] ]]; do out=${out%?}; done
	out=$(printf '%04d-%s' "$1" "$out")
	echo "${out:0:maxlen - 7}.patch"
}

# diffstat STATS: the diffstat git format-patch draws (72 columns, with
# the summary of created and deleted files) for STATS, lines "ADDED
# DELETED PATH [new|gone]": git draws it, from a scratch repository
# whose files lose and gain that many lines.
diffstat() {
	local r=$TMP/stat a d f k
	rm -rf "$r" && sinit "$r"
	while read -r a d f k; do
		mkdir -p "$r/$(dirname "$f")"
		[ "$k" = new ] || seq -f 'old %g' "$d" > "$r/$f"
	done < "$1"
	sgit "$r" add -A && sgit "$r" commit -q --allow-empty -m before
	while read -r a d f k; do
		if [ "$k" = gone ]; then rm -f "$r/$f"; else seq -f 'new %g' "$a" > "$r/$f"; fi
	done < "$1"
	sgit "$r" add -A && sgit "$r" commit -q --allow-empty -m after
	sgit "$r" diff --stat=72 --summary --no-renames HEAD~ HEAD
}
# stats PATCH: its STATS lines (above), from git apply
stats() {
	sgit "$TMP" apply --numstat --summary "$1" | awk '
		/^[0-9-]+\t/ { split($0, f, "\t"); n[++c] = f[3]; line[f[3]] = f[1] + 0 " " f[2] + 0 " " f[3] }
		$1 == "create" { kind[$NF] = " new" } $1 == "delete" { kind[$NF] = " gone" }
		END { for (i = 1; i <= c; i++) print line[n[i]] kind[n[i]] }'
}
sinit "$TMP"

mkdir -p "$OUT"
rm -f "$OUT"/*.patch
say "series-export: $total patches and a cover letter, From: and Signed-off-by: $ident -> $OUT"
subjects=()
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	f=$PATCHES/$p
	[ -f "$f" ] || fail "$p" "named in $PATCHES/series but not there" "add it, or take it out of the series"
	# the mail header: up to the first empty line; a folded line goes on
	# with white space
	subject=$(awk '/^$/ { exit } /^Subject: / { s = substr($0, 10); on = 1; next }
		on && /^[ \t]/ { sub(/^[ \t]+/, " "); s = s $0; next } { on = 0 } END { print s }' "$f")
	subject=${subject#\[PATCH\] }
	[ -n "$subject" ] || fail "$p" "no Subject: in its header" "begin it with From: and Subject: lines, as git format-patch does"
	grep -qxF "From: $PLACEHOLDER" <(sed '/^$/q' "$f") && grep -qxF "Signed-off-by: $PLACEHOLDER" "$f" ||
		fail "$p" "its From: or Signed-off-by: is not the series' placeholder '$PLACEHOLDER'" \
			"give it both, as every patch of the series has (make series-check checks it)"
	subjects+=("$subject")
	stats "$f" > "$TMP/stats"
	diffstat "$TMP/stats" > "$TMP/diffstat"
	out=$OUT/$(filename "$n" "$subject")
	awk -v ph="$PLACEHOLDER" -v id="$ident" -v tag="$(printf "[PATCH %0${digits}d/%d]" "$n" "$total")" \
	    -v subj="$subject" -v stat="$TMP/diffstat" '
		!body && /^$/ { body = 1 }
		!body && /^Subject: / { print "Subject: " tag " " subj; skip = 1; next }
		!body && skip && /^[ \t]/ { next }
		{ skip = 0 }
		!body && $0 == "From: " ph { print "From: " id; next }
		body && !diff && $0 == "Signed-off-by: " ph { print "Signed-off-by: " id; next }
		body && !diff && $0 == "---" {
			diff = 1; print
			while ((getline l < stat) > 0) print l
			print ""; next }
		{ print }' "$f" > "$out"
	! grep -q 'mmlab@localhost' "$out" ||
		fail "$p" "the placeholder is left in $out: $(grep -m1 'mmlab@localhost' "$out")" \
			"only its From: and Signed-off-by: lines may name '$PLACEHOLDER'"
	echo "  $(basename "$out")"
done

# The cover letter.
fields=$(tree_conf package version sublevel)
{ read -r pkg; read -r version; read -r sub; } <<EOF
$fields
EOF
version=$version.$sub
deb=$(dpkg-query -W -f='${Version}' "$pkg" 2> /dev/null || true)
base="Based on Linux $version as Debian's $pkg ${deb:-(not installed here, so its Debian version unknown)} ships it."
# the series' diffstat: applied to the files it touches, from pristine
: > "$TMP/all"
for p in "${patches[@]}"; do stats "$PATCHES/$p" >> "$TMP/all"; done
net=$TMP/net
if GIT_DIR=$GITDIR git rev-parse -q --verify 'pristine^{commit}' > /dev/null 2>&1; then
	sinit "$net"
	mapfile -t touched < <(awk '{print $3}' "$TMP/all" | sort -u)
	mapfile -t have < <(GIT_DIR=$GITDIR git ls-tree -r --name-only pristine -- "${touched[@]}")
	[ ${#have[@]} = 0 ] || GIT_DIR=$GITDIR git archive pristine -- "${have[@]}" | tar -x -C "$net"
	sgit "$net" add -A && sgit "$net" commit -q --allow-empty -m pristine
	for p in "${patches[@]}"; do
		sgit "$net" apply "$PATCHES/$p" 2> "$TMP/apply.log" ||
			fail "$p" "does not apply after the patches before it: $(head -1 "$TMP/apply.log")" \
				"make series names its rejected hunk"
	done
	sgit "$net" add -A
	sgit "$net" diff --cached --stat=72 --summary --no-renames > "$TMP/series.stat"
else
	warn "no pristine tag in $GITDIR: the cover letter's diffstat is the sum of the patches' own (make tree)"
	awk '{ a[$3] += $1; d[$3] += $2; if (!($3 in k)) { o[++c] = $3; k[$3] = $4 } }
		$4 == "new" { k[$3] = "new" }
		END { for (i = 1; i <= c; i++) print a[o[i]], d[o[i]], o[i], k[o[i]] }' "$TMP/all" > "$TMP/sum"
	{ diffstat "$TMP/sum"; echo; echo "(the sum of the patches' own diffstats: no pristine tree to apply them to)"; } \
		> "$TMP/series.stat"
fi
# the shortlog: git shortlog of a log of the series, newest first
for ((i = total - 1; i >= 0; i--)); do
	printf 'commit %d\nAuthor: %s\n\n    %s\n\n' "$i" "$ident" "${subjects[i]}"
done | sgit "$TMP" shortlog -w72,2,4 > "$TMP/shortlog"
{
	echo "From: $ident"
	printf "Subject: [PATCH %0${digits}d/%d] %s\n" 0 "$total" "$(head -1 "$COVER" | cut -c10-)"
	sed 1d "$COVER"
	echo
	echo "$base" | fold -s -w 72 | sed 's/ *$//'
	echo
	cat "$TMP/shortlog"	# it ends with an empty line
	cat "$TMP/series.stat"
} > "$OUT/0000-cover-letter.patch"
echo "  0000-cover-letter.patch ($base)"

if [ "${CHECKPATCH:-1}" = 0 ]; then
	say "series-export: checkpatch not run (CHECKPATCH=0): the patches are in $OUT, unchecked"
	exit 0
fi
[ -f "$KSRC/scripts/checkpatch.pl" ] || die "no scripts/checkpatch.pl in $KSRC" \
	"make tree (make series-export does it), or CHECKPATCH=0 to export unchecked"
say "series-export: checkpatch --strict on the $total exported patches"
# all at once (one per CPU), then reported in order
find "$OUT" -name '[0-9]*.patch' ! -name 0000-cover-letter.patch -print0 |
	xargs -0 -P "$(nproc)" -I{} bash -c 'cd "$1" && perl scripts/checkpatch.pl --strict --show-types "$2" \
		> "$3/checkpatch-${2##*/}" 2>&1; true' _ "$KSRC" {} "$TMP"
fails=0 unknown=0
for f in "$OUT"/[0-9]*.patch; do
	[ "$(basename "$f")" != 0000-cover-letter.patch ] || continue
	out=$(cat "$TMP/checkpatch-$(basename "$f")")
	# here-strings, not pipes: grep -q leaving early must not fail a pipeline
	ids=$(grep -c '^WARNING:UNKNOWN_COMMIT_ID:' <<< "$out" || true)
	# checkpatch's own count: "total: E errors, W warnings, C checks, ..."
	e='' w='' c=''
	read -r e w c < <(sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) checks.*/\1 \2 \3/p' <<< "$out") || true
	unknown=$((unknown + ids))
	if [ -n "${e:-}" ] && [ "$e" = 0 ] && [ "$c" = 0 ] && [ "$w" = "$ids" ]; then
		note=''
		[ "$ids" = 0 ] || note=" ($ids unknown commit ids)"
		echo "  ok   $(basename "$f")$note"
	else
		why="no total line (checkpatch did not finish)"
		[ -z "${e:-}" ] || why="$e errors, $w warnings ($ids of them unknown commit ids), $c checks"
		echo "  FAIL $(basename "$f"): $why"
		grep -v '^$' <<< "$out" | sed 's/^/       /'
		fails=$((fails + 1))
	fi
done
if [ $fails -gt 0 ]; then
	say "series-export: checkpatch --strict finds problems in $fails of $total patches (in $OUT)"
	exit 1
fi
say "series-export: $total patches checkpatch --strict clean ($unknown unknown commit ids allowed: this tree has no upstream history); send with: git send-email $OUT/*.patch"

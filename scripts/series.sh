#!/bin/bash
# Keep the tree's applied patches equal to the repo's quilt series.
#   series.sh apply   SRC GITDIR PATCHES  re-apply when patches/ changed
#   series.sh refresh SRC GITDIR PATCHES [PATCH]  turn local edits into the
#                                         top patch (or into PATCH, lower down)
#   series.sh edits   SRC GITDIR          list local edits (files)
#   series.sh reset   SRC GITDIR          discard local edits
# The git repository in GITDIR (outside the tree) holds two states: tag
# "pristine" and HEAD = pristine + the applied series. Anything else in the
# tree is a local edit and is never thrown away.
. "$(dirname "$0")/lib.sh"
set -Eeuo pipefail	# -E: the ERR trap of refresh() also fires inside quilt()
cmd=$1 SRC=$2 GITDIR=$3 PATCHES=${4:-}
export GIT_DIR=$GITDIR GIT_WORK_TREE=$SRC
export QUILT_PATCHES=patches QUILT_PC=.pc
export QUILT_REFRESH_ARGS="-p ab --no-timestamps --no-index --sort"
export QUILT_DIFF_ARGS="-p ab --no-timestamps --no-index"
STAMP=$GITDIR/mmlab-series.sum
# Our settings only: no ~/.quiltrc or /etc/quilt.quiltrc (they change the patch format).
quilt() { command quilt --quiltrc - "$@"; }
GIT="git -c user.name=mmlab -c user.email=mmlab@localhost"

series_sum() {
	(cd "$PATCHES" && cat series $(grep -v -e '^#' -e '^[[:space:]]*$' series | awk '{print $1}')) |
		sha256sum | cut -d' ' -f1
}

# Files that differ from HEAD (modified, deleted or new), quilt's own excluded.
edits() {
	cd "$SRC"
	# quilt's own state, Python byte code (kunit.py, gdb helpers) and the
	# cache checkpatch --strict leaves in the tree are not edits
	{ git diff --name-only HEAD; git ls-files -o -x /.pc/ -x /patches -x __pycache__ -x '*.pyc' \
		-x '/.checkpatch-camelcase.*'; } |
		sort -u
}

commit_state() {
	(cd "$SRC" && git add -A -f -- . ':!.pc' ':!patches' &&
		$GIT commit -q --allow-empty -m "series applied")
	series_sum > "$STAMP"
}

apply() {
	[ -f "$PATCHES/series" ] || die "$PATCHES/series is missing" "restore it from git"
	local sum
	sum=$(series_sum) || die "a patch named in $PATCHES/series is missing" \
		"add the file or remove its line from the series"
	[ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$sum" ] && return 0

	local changed
	changed=$(edits)
	if [ -n "$changed" ]; then
		printf 'mmlab: the series changed, but %s has local edits:\n' "$SRC" >&2
		echo "$changed" | head -20 | sed 's/^/mmlab:   /' >&2
		die "refusing to re-apply the series over local edits" \
			"'make series-refresh' turns them into the top patch; 'make series-reset' discards them"
	fi

	cd "$SRC"
	# The files the applied series touches, with their contents' hash and
	# mtime: a file the new series leaves with the same contents gets its
	# mtime back, so that a changelog edit rebuilds nothing.
	local kept=$GITDIR/kept-mtimes
	git diff --name-only pristine HEAD | while IFS= read -r f; do
		[ -f "$f" ] && printf '%s %s %s\n' "$(sha256sum < "$f" | cut -c1-64)" "$(stat -c %Y "$f")" "$f"
	done > "$kept"
	git reset -q --hard pristine
	git clean -fdxq -e /patches
	ln -sfn "$PATCHES" patches
	local n
	n=$(grep -cv -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" || true)
	say "applying $n patches from $PATCHES/series"
	if [ "$n" -gt 0 ] && ! quilt push -a -q > "$GITDIR/quilt-push.log" 2>&1; then
		local bad
		bad=$(sed -n 's/^Applying patch \(.*\)$/\1/p' "$GITDIR/quilt-push.log" | tail -1)
		bad=${bad#patches/}
		echo "mmlab: patch $bad does not apply:" >&2
		grep -v '^Applying patch' "$GITDIR/quilt-push.log" | sed 's/^/mmlab:   /' >&2
		local rej=$GITDIR/rejects
		rm -rf "$rej" && mkdir -p "$rej"
		# Show the rejected hunks: replay the patch against a scratch output.
		(cd "$SRC" && patch -p1 -f -s --no-backup-if-mismatch -o "$rej/out" -r "$rej/hunks.rej" \
			< "$PATCHES/$bad" > /dev/null 2>&1) || true
		if [ -s "$rej/hunks.rej" ]; then
			echo "mmlab: rejected hunk(s) of $bad:" >&2
			sed 's/^/mmlab:   | /' "$rej/hunks.rej" | head -40 >&2
		fi
		git reset -q --hard pristine
		git clean -fdxq -e /patches
		rm -f "$STAMP"
		die "the tree was left pristine (no patch applied)" \
			"refresh $PATCHES/$bad against Linux ${MMLAB_TREE:-its tree} (cd $SRC; quilt push -f; fix; quilt refresh)"
	fi
	commit_state
	local sum mtime f same=0
	while read -r sum mtime f; do
		if [ -f "$f" ] && [ "$(sha256sum < "$f" | cut -c1-64)" = "$sum" ]; then
			touch -m -d "@$mtime" "$f"; same=$((same + 1))
		fi
	done < "$kept"
	say "series applied: $(quilt applied 2>/dev/null | wc -l) patches, top: $(quilt top 2>/dev/null || echo none)" \
		"($same files unchanged kept their mtime)"
}

refresh() {
	cd "$SRC"
	local top changed f
	top=$(quilt top 2>/dev/null) || die "no patch is applied to turn the edits into" \
		"cd $SRC && quilt new NNNN-subsystem-what.patch, then make series-refresh"
	changed=$(edits)
	if [ -z "$changed" ]; then
		say "no local edits; $top unchanged"
		series_sum > "$STAMP"
		return 0
	fi
	# Keep a copy of every edited file until the refresh succeeded; put them
	# all back if anything fails on the way.
	BACKUP=$GITDIR/refresh-backup
	rm -rf "$BACKUP" && mkdir -p "$BACKUP"
	for f in $changed; do
		if [ -e "$f" ]; then mkdir -p "$BACKUP/$(dirname "$f")"; cp -p "$f" "$BACKUP/$f"; fi
	done
	trap 'restore_edits' ERR
	for f in $changed; do
		quilt files "$top" | grep -qxF "$f" && continue
		# quilt add must see the file as it was before the edit.
		if git cat-file -e "HEAD:$f" 2>/dev/null; then
			git checkout -q HEAD -- "$f"
		else
			rm -f "$f"
		fi
		quilt add "$f" > /dev/null
		if [ -e "$BACKUP/$f" ]; then cp -p "$BACKUP/$f" "$f"; else rm -f "$f"; fi
	done
	quilt refresh
	trap - ERR
	commit_state
	rm -rf "$BACKUP"
	say "local edits of $(echo "$changed" | wc -l) files are now in $PATCHES/${top#patches/}"
}

# refresh_into PATCH: turn local edits into PATCH (a name or a prefix of
# one), lower in the series: the edits are set aside as a diff, the series
# is popped down to PATCH, the diff goes on and becomes part of PATCH, and
# the patches above are pushed again. A diff that does not apply at PATCH,
# or a patch above that no longer applies, puts everything back.
refresh_into() {
	cd "$SRC"
	local want=$1 target changed f saved=$GITDIR/refresh-into.diff
	target=$(quilt series | sed 's,^patches/,,' | grep -m1 "^$want") ||
		die "no patch $want in the series" "quilt series lists them"
	changed=$(edits)
	[ -n "$changed" ] || { say "no local edits; $target unchanged"; return 0; }
	git add -N -f -- $changed
	git diff --binary HEAD -- $changed > "$saved"
	git reset -q -- $changed
	back() {	# put the edits back on the full series
		quilt push -a -q > /dev/null 2>&1
		git checkout -q HEAD -- . 2>/dev/null
		git apply "$saved" || true
		die "$1; your edits are back in place (also in $saved)" "$2"
	}
	for f in $changed; do
		if git cat-file -e "HEAD:$f" 2>/dev/null; then git checkout -q HEAD -- "$f"; else rm -f "$f"; fi
	done
	quilt pop -q "$target" > /dev/null || back "quilt pop to $target failed" "make series-edits"
	for f in $changed; do
		quilt files | grep -qxF "$f" || quilt add "$f" > /dev/null
	done
	git apply "$saved" 2> "$GITDIR/refresh-into.log" ||
		back "the edits do not apply on top of $target (see $GITDIR/refresh-into.log)" \
			"edit the files as they are at $target, or refresh into a higher patch"
	quilt refresh > /dev/null
	if ! quilt push -a -q > "$GITDIR/quilt-push.log" 2>&1; then
		quilt pop -a -q > /dev/null 2>&1
		die "$target took the edits, but a patch above it no longer applies (see $GITDIR/quilt-push.log)" \
			"fix that patch (quilt push -f; fix; quilt refresh), or git checkout patches/ to undo"
	fi
	commit_state
	say "local edits of $(echo "$changed" | wc -l) files are now in $PATCHES/$target"
}

restore_edits() {
	local f
	for f in $changed; do
		if [ -e "$BACKUP/$f" ]; then cp -p "$BACKUP/$f" "$SRC/$f"; else rm -f "$SRC/$f"; fi
	done
	die "series-refresh failed; your edits are back in place (copies in $BACKUP)"
}

case $cmd in
apply) apply ;;
refresh) if [ -n "${5:-}" ]; then refresh_into "$5"; else refresh; fi ;;
edits) edits ;;
reset)
	cd "$SRC"
	changed=$(edits)
	git reset -q --hard HEAD
	git clean -fdxq -e /patches -e /.pc
	say "discarded local edits of $(echo "$changed" | grep -c . || true) files" ;;
*) die "unknown command $cmd" "series.sh apply|refresh|edits" ;;
esac

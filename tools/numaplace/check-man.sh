#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tools/numaplace/check-man.sh NUMAPLACE MANPAGE: check numaplace(1)
# against the tool's own help. Every command `NUMAPLACE --help` lists must
# have an entry in the man page's COMMANDS section (a .TP whose tag starts
# with the command's name) and the other way round; every option in a
# command's `--help` option table must be in its entry, and every option
# its entry names must be in the table (-h/--help, which every command
# has, excepted). Prints each mismatch and exits 1 on any.
set -eu

bin=$1
man=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The commands of `numaplace --help`: "  NAME  what it does" after "commands:".
"$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' \
	> "$tmp/cmds"

# The man page's COMMANDS section, one file per entry, without font
# escapes and with "\-" as "-".
awk -v dir="$tmp" '
	/^\.SH / { in_cmds = ($2 == "COMMANDS"); cur = ""; next }
	!in_cmds { next }
	/^\.TP/ { tp = 1; next }
	tp && /^\.BR? [a-z]+/ {
		tp = 0
		name = $2
		sub(/"$/, "", name)
		if (system("grep -qx \"" name "\" " dir "/cmds") == 0) {
			cur = dir "/man." name
			print name > (dir "/mancmds")
		}
	}
	{ tp = 0 }
	cur != "" {
		line = $0
		gsub(/\\-/, "-", line)
		gsub(/\\f[BIRP]/, "", line)
		print line >> cur
	}
' "$man"
touch "$tmp/mancmds"

fail=0
for c in $(cat "$tmp/cmds"); do
	if ! grep -qx "$c" "$tmp/mancmds"; then
		echo "check-man: $man: no entry for command '$c' under COMMANDS"
		fail=1
		continue
	fi
	# The option table of the help: "  -p, --pid PID  ..." or "  --json ...".
	"$bin" "$c" --help |
		grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z-]*' |
		grep -oE -- '--?[a-zA-Z][a-zA-Z-]*' |
		grep -vxE -- '-h|--help' | sort -u > "$tmp/help.$c"
	grep -oE -- '(^|[^a-zA-Z0-9_-])--?[a-zA-Z][a-zA-Z-]*' "$tmp/man.$c" |
		sed -E 's/^[^-]+//' | grep -vxE -- '-h|--help' |
		grep -E -- '^(--[a-z][a-z-]*|-[a-zA-Z])$' | sort -u > "$tmp/man.opts.$c"
	for o in $(comm -23 "$tmp/help.$c" "$tmp/man.opts.$c"); do
		echo "check-man: $man: '$c' entry lacks $o (numaplace $c --help has it)"
		fail=1
	done
	for o in $(comm -13 "$tmp/help.$c" "$tmp/man.opts.$c"); do
		echo "check-man: $man: '$c' entry names $o, which numaplace $c --help does not have"
		fail=1
	done
done
if [ "$fail" = 0 ]; then
	echo "check-man: $man matches the help of $(wc -l < "$tmp/cmds") commands"
fi
exit "$fail"

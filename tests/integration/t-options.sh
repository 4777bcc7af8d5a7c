#!/bin/bash
# The option tables (base/opts.h), the man page and the guides agree: each
# command's and verb's SYNOPSIS line in docs/apiparity.1 names exactly the
# options of its table, OPTIONS describes every option of every table and no
# other, and what README.md and docs/*.md give apiparity (in code) exists.
# The tables come from `apiparity help --options`. Needs no environment.
. "$(dirname "$0")/lib.sh"
MAN=$TOP/docs/apiparity.1
# Options of other programs that the guides name in code of their own
# (sbatch, headless Chromium): not apiparity's.
FOREIGN="--gres --parsable --requeue --dump-dom --screenshot"

tables=$("$APIPARITY" help --options)
sets=$(cut -f1 <<< "$tables")
nsets=$(grep -c . <<< "$sets")
plan $((nsets + 8))

# man.py WHAT - what docs/apiparity.1 or the guides name, as lines
# "NAME<TAB>OPTION OPTION...": WHAT is synopsis (NAME: the command and verb of
# each SYNOPSIS line), tags (NAME: OPTIONS, the option of each .TP), all
# (NAME: man, every long option anywhere in the page), or md FILE... (NAME:
# FILE:LINE, and the set the invocation names: "README.md:349 tests run").
cat > "$T/man.py" <<'PY'
import os, re, shlex, sys

OPT = re.compile(r'(?<![\w-])(--?[a-zA-Z][a-zA-Z0-9-]*)')

def man_lines(path):
    return open(path, encoding='utf-8').read().replace('\\-', '-').split('\n')

def synopsis(path):
    name, out = None, {}
    section = None
    for l in man_lines(path):
        if l.startswith('.SH'):
            section, name = l[4:].strip(), None
            continue
        if section != 'SYNOPSIS':
            continue
        if l.startswith('.br'):
            name = None
            continue
        m = re.match(r'\.B apiparity(?: (.*))?$', l)
        if m:
            name = (m.group(1) or '').strip()
            out.setdefault(name, [])
        elif name is not None:
            out[name] += OPT.findall(l)
    for name, opts in out.items():
        if name:
            print('%s\t%s' % (name, ' '.join(opts)))

def tags(path):
    section, after_tp, opts = None, False, []
    for l in man_lines(path):
        if l.startswith('.SH'):
            section = l[4:].strip()
        elif section == 'OPTIONS' and after_tp:
            opts += OPT.findall(l)
        after_tp = section == 'OPTIONS' and l.startswith('.TP')
    print('OPTIONS\t%s' % ' '.join(opts))

def all_long(path):
    opts = set(o for l in man_lines(path) for o in OPT.findall(l) if o.startswith('--'))
    print('man\t%s' % ' '.join(sorted(opts)))

# Code in Markdown: fenced blocks (a line ending in \ goes on) and `spans`.
def code(path):
    text = open(path, encoding='utf-8').read()
    fenced = re.compile(r'^```[^\n]*\n(.*?)^```', re.S | re.M)
    for m in fenced.finditer(text):
        line = text.count('\n', 0, m.start(1)) + 1
        for k, l in enumerate(m.group(1).replace('\\\n', '  ').split('\n')):
            yield line + k, l
    rest = fenced.sub(lambda m: '\n' * m.group(0).count('\n'), text)
    for m in re.finditer(r'`([^`]+)`', rest):
        yield rest.count('\n', 0, m.start()) + 1, m.group(1).replace('\n', ' ')

def words(s):
    lex = shlex.shlex(s, posix=True, punctuation_chars=True)
    lex.whitespace_split, lex.commenters = True, '#'
    try:
        return list(lex)
    except ValueError:
        return s.split()

def md(sets, top, paths):
    sets = set(sets)
    for path in paths:
        name = os.path.relpath(path, top)
        for line, c in code(path):
            w = words(c)
            if w and w[0].startswith('--'):
                print('%s:%d\t*\t%s' % (name, line, w[0].split('=')[0]))
            for i, t in enumerate(w):
                if t != 'apiparity' or i + 1 == len(w):
                    continue
                cmd = w[i + 1]
                if i + 2 < len(w) and '%s %s' % (cmd, w[i + 2]) in sets:
                    cmd = '%s %s' % (cmd, w[i + 2])
                opts = []
                for t in w[i + 2:]:
                    if t in ('|', ';', '&&', '||', '&', ')'):
                        break
                    t = t.strip('[]')
                    if re.match(r'--?[a-zA-Z]', t):
                        opts.append(t.split('=')[0].rstrip('.,'))
                if opts:
                    print('%s:%d\t%s\t%s' % (name, line, cmd, ' '.join(opts)))

what = sys.argv[1]
if what == 'synopsis': synopsis(sys.argv[2])
elif what == 'tags': tags(sys.argv[2])
elif what == 'all': all_long(sys.argv[2])
else: md(open(sys.argv[2]).read().split('\n'), sys.argv[3], sys.argv[4:])
PY
man=$("$PYTHON" "$T/man.py" synopsis "$MAN")
sorted() { tr ' ' '\n' | grep . | sort -u | tr '\n' ' '; }
table_of() { grep -P "^\Q$1\E\t" <<< "$tables" | cut -f2; }

# Each command and verb: its SYNOPSIS line names exactly its table's options.
while IFS= read -r s; do
	want=$(table_of "$s" | sorted)
	got=$(grep -P "^\Q$s\E\t" <<< "$man" | cut -f2 | sorted)
	if ! grep -qP "^\Q$s\E\t" <<< "$man"; then
		nok "man_synopsis_of_${s// /_}_names_its_options" "docs/apiparity.1 has no SYNOPSIS line for '$s'"
	else
		equals "$got" "$want" "man_synopsis_of_${s// /_}_names_its_options"
	fi
done <<< "$sets"

# No SYNOPSIS line is for a command or verb that has no table.
extra=$(cut -f1 <<< "$man" | grep -vxFf <(printf '%s\n' "$sets"))
equals "$extra" "" man_synopsis_has_no_command_without_a_table

# OPTIONS describes every option of every table, and only those (and --help).
all=$(cut -f2 <<< "$tables" | sorted)
described=$("$PYTHON" "$T/man.py" tags "$MAN" | cut -f2 | sorted)
missing=$(comm -23 <(tr ' ' '\n' <<< "$all" | grep .) <(tr ' ' '\n' <<< "$described" | grep .) | tr '\n' ' ')
equals "$missing" "" man_options_describes_every_option_of_the_tables
unknown=$(comm -13 <(tr ' ' '\n' <<< "$all --help -h" | grep . | sort -u) \
	<(tr ' ' '\n' <<< "$described" | grep .) | tr '\n' ' ')
equals "$unknown" "" man_options_describes_no_option_without_a_table
# Anywhere in the page, a long option is one of a table.
named=$("$PYTHON" "$T/man.py" all "$MAN" | cut -f2 | sorted)
unknown=$(comm -13 <(tr ' ' '\n' <<< "$all --help" | grep . | sort -u) \
	<(tr ' ' '\n' <<< "$named" | grep .) | tr '\n' ' ')
equals "$unknown" "" man_page_names_no_long_option_without_a_table

# The guides: each apiparity invocation in code takes only the options of its
# command (of its verb, where it names one); an option alone in code (`--resume`)
# is one of some table.
bad=""
while IFS=$'\t' read -r where s opts; do
	[ -n "$where" ] || continue
	if [ "$s" = "*" ]; then
		have="$all $FOREIGN"
	elif grep -qP "^\Q$s\E\t" <<< "$tables"; then
		have=$(table_of "$s")
	else
		have=$(grep -P "^\Q$s\E " <<< "$tables" | cut -f2 | tr '\n' ' ')
		[ -n "$have" ] || { bad="$bad $where:$s(no such command)"; continue; }
	fi
	for o in $opts; do
		case " $have --help -h " in *" $o "*) ;; *) bad="$bad $where:$s:$o" ;; esac
	done
done < <("$PYTHON" "$T/man.py" md <(printf '%s\n' "$sets") "$TOP" "$TOP/README.md" "$TOP"/docs/*.md 2>/dev/null)
equals "$bad" "" guides_give_apiparity_only_options_of_its_tables

# --help, of apiparity and of each command and verb, comes from the tables.
run 0 help_succeeds "$APIPARITY" --help
lacking=""
while IFS= read -r s; do grep -qP "^  \Q$s\E( |$)" <<< "$out" || lacking="$lacking [$s]"; done <<< "$sets"
equals "$lacking" "" help_shows_every_command_and_verb
lacking=""
while IFS= read -r s; do
	# shellcheck disable=SC2086 # the set's name is the command and verb
	h=$("$APIPARITY" $s --help) || lacking="$lacking [$s: exit $?]"
	for o in $(table_of "$s"); do
		grep -qE -- "^  $o( |$)" <<< "$h" && grep -qE -- "(\[| )$o( |\])" <<< "${h%%options:*}" ||
			lacking="$lacking [$s: $o]"
	done
done <<< "$sets"
equals "$lacking" "" each_help_shows_its_options_in_its_usage_and_its_list
done_testing

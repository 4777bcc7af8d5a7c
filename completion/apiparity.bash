# bash completion for apiparity(1).
#
# Commands, verbs and options come from the binary itself
# (`apiparity help --options`: a line per command or verb, its options after a
# tab), so this file never lists them and cannot fall behind; environment names
# from `apiparity env list --names`, with the --envs FILE and --root DIR the
# command line gives, none of them reached.

# _apiparity_envs WORD... - the environment names the words' --envs/--root see.
_apiparity_envs() {
	local i a=()
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		case ${COMP_WORDS[i]} in
		--envs | --root) a+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}") ;;
		esac
	done
	"${COMP_WORDS[0]}" env list --names "${a[@]}" 2> /dev/null
}

_apiparity() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local table cmd key opts
	table=$("${COMP_WORDS[0]}" help --options 2> /dev/null) || return 0
	COMPREPLY=()
	if [ "$COMP_CWORD" = 1 ]; then
		COMPREPLY=($(compgen -W "$(cut -f1 <<< "$table" | cut -d' ' -f1 | sort -u) --help --version" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]} key=${COMP_WORDS[1]}
	if grep -q "^$cmd " <<< "$table"; then
		if [ "$COMP_CWORD" = 2 ]; then
			COMPREPLY=($(compgen -W "$(grep "^$cmd " <<< "$table" | cut -f1 | cut -d' ' -f2)" -- "$cur"))
			return 0
		fi
		key="$cmd ${COMP_WORDS[2]}"
	fi
	case $prev in
	--env | --reference)
		COMPREPLY=($(compgen -W "$(_apiparity_envs)" -- "$cur"))
		return 0 ;;
	--lang) COMPREPLY=($(compgen -W "zh en" -- "$cur")); return 0 ;;
	--depth) COMPREPLY=($(compgen -W "resolve signature probe numeric" -- "$cur")); return 0 ;;
	--envs | --out | --specs | --torch-src | --script | --sign | --tolerances | --limits | \
	--root | --policy | --trust | --log | --docs | --docs-src | --catalog | --plugins | --python)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		opts=$(awk -F'\t' -v k="$key" '$1 == k { print $2 }' <<< "$table")
		COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
		return 0
	fi
	case $key in
	"env show" | "tests fetch") COMPREPLY=($(compgen -W "$(_apiparity_envs)" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
	return 0
}
complete -F _apiparity apiparity

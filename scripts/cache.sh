# Caches that outlive a clone, for the build scripts (sourced, not run).
#
# COREDAM_CACHE (default $XDG_CACHE_HOME/coredam, else /var/cache/coredam
# for root and ~/.cache/coredam for others) holds:
#   ccache/        compiler cache for every kernel build (size cap
#                  COREDAM_CCACHE_SIZE, default 8G)
#   rootfs/        debootstrapped Debian base trees, keyed by package list
# Nothing in it decides what is tested: kernels are compiled from the
# applied series on every run (ccache only hands back the object of an
# identical compilation), and a base tree is used only when its key matches.
# COREDAM_CCACHE=0 builds without ccache.

coredam_cache_dir() {
	local dir=${COREDAM_CACHE:-}
	if [[ -z $dir ]]; then
		if [[ -n ${XDG_CACHE_HOME:-} ]]; then
			dir=$XDG_CACHE_HOME/coredam
		elif [[ $(id -u) -eq 0 || -z ${HOME:-} ]]; then
			dir=/var/cache/coredam
		else
			dir=$HOME/.cache/coredam
		fi
	fi
	mkdir -p "$dir"
	echo "$dir"
}

# ccache_env LOG: export what make needs to compile through ccache, with
# per-compilation results appended to LOG (read by ccache_summary). Prints
# nothing; without ccache (or with COREDAM_CCACHE=0) it leaves CC alone.
ccache_env() {
	CCACHE_WRAP=
	[[ ${COREDAM_CCACHE:-1} != 0 ]] || return 0
	command -v ccache > /dev/null || return 0
	export CCACHE_DIR
	CCACHE_DIR=$(coredam_cache_dir)/ccache
	export CCACHE_MAXSIZE=${COREDAM_CCACHE_SIZE:-8G}
	# kernel trees live in build/ of whichever clone runs: the paths in
	# the compiler's command line must not key the cache (in-tree builds
	# use relative paths; an out-of-tree one is rewritten relative to it)
	export CCACHE_NOHASHDIR=1
	export CCACHE_STATSLOG=$1
	: > "$1"
	CCACHE_WRAP="ccache gcc"
}

# ccache_summary LOG: "N of M compilations from the cache", or nothing
ccache_summary() {
	[[ -n ${CCACHE_WRAP:-} && -s $1 ]] || return 0
	local hits misses
	hits=$(grep -c -E '^(direct|preprocessed)_cache_hit$' "$1" || true)
	misses=$(grep -c -x cache_miss "$1" || true)
	echo "$hits of $((hits + misses)) compilations from the cache"
}

# apt_mirror SUITE: the Debian archive this machine's apt already uses for
# SUITE (its sources.list or deb822 .sources files), so that the project
# never names a host. DEBIAN_MIRROR overrides it.
apt_mirror() {
	local suite=$1
	if [[ -n ${DEBIAN_MIRROR:-} ]]; then
		echo "$DEBIAN_MIRROR"
		return 0
	fi
	local f uri=
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		# deb822 stanzas: blank-line separated; want Types deb, SUITE, main
		uri=$(awk -v suite="$suite" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && suites ~ "(^| )" suite "( |$)" &&
				    comps ~ /(^| )main( |$)/ && uris != "" && !found) {
					split(uris, u, " "); print u[1]; found = 1
				}
				types = suites = comps = uris = ""
			}
			/^[[:space:]]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "components:" { $1 = ""; comps = $0 }
			tolower($1) == "uris:" { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
			END { flush() }' "$f")
		[[ -n $uri ]] && break
	done
	if [[ -z $uri ]]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk -v suite="$suite" '$1 == "deb" {
				i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
				if ($(i + 1) == suite) { print $i; exit }
			}')
	fi
	if [[ -z $uri ]]; then
		echo "no apt source for $suite main found; set DEBIAN_MIRROR" >&2
		return 1
	fi
	echo "${uri%/}"
}

# hold_lock FILE WHO: take an exclusive lock on FILE for the rest of the
# script (fd 9), waiting for whoever holds it. Two builds in one tree at
# once would corrupt it, and could store objects in ccache under the other
# build's configuration.
hold_lock() {
	mkdir -p "$(dirname "$1")"
	exec 9> "$1"
	if ! flock -n 9; then
		echo "$2: waiting for another build that holds $1" >&2
		flock 9
	fi
}

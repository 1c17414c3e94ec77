# Caches that outlive a clone, for the build scripts (sourced, not run).
#
# COREDAM_CACHE (default $XDG_CACHE_HOME/coredam, else /var/cache/coredam
# for root and ~/.cache/coredam for others) holds:
#   ccache/        compiler cache for every kernel build (size cap
#                  COREDAM_CCACHE_SIZE, default 8G)
#   rootfs/        debootstrapped Debian base trees, keyed by package list
#   kernel-source/ linux-source packages of newer releases (fetch-kernel-source.sh)
#   promtool/      Debian's prometheus package, for its promtool (fetch-promtool.sh)
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

deb_version() { dpkg-deb -f "$1" Version; }

# verified_deb PKG CACHE: the newest .deb of PKG in CACHE whose checksum
# file (PKG_VERSION_ARCH.deb.sha256, the archive index's SHA256) matches
# it, or nothing; a .deb without one is not trusted
verified_deb() {
	local pkg=$1 cache=$2 deb best=
	for deb in "$cache/${pkg}_"*.deb; do
		[[ -f $deb && -f $deb.sha256 ]] || continue
		[[ $(cut -d' ' -f1 "$deb.sha256") == "$(sha256sum "$deb" | cut -d' ' -f1)" ]] || {
			echo "$(basename "$deb") does not match its checksum: ignored" >&2
			continue
		}
		if [[ -z $best ]] || dpkg --compare-versions "$(deb_version "$deb")" gt "$(deb_version "$best")"; then
			best=$deb
		fi
	done
	echo "$best"
}

# cached_deb WHO PKG SUITE APTDIR CACHE [REFRESH]: the path of a verified
# .deb of PKG (this machine's architecture or all) from SUITE of the archive this machine's apt
# uses (apt_mirror; SUITE may be the machine's own release), downloaded into CACHE unless a verified one is there
# already (or REFRESH is 1: ask the archive for a newer one). The download
# goes through a private apt configuration in APTDIR (one source list, no
# dpkg status, lists and package cache of its own, removed after), so
# nothing is installed and the system's apt state is untouched; apt checks
# the index's signature against debian-archive-keyring and the .deb
# against the index's SHA256, and the .deb is moved into CACHE only once
# verified, before its checksum file, so a cut-short one is never taken
# for whole.
cached_deb() {
	local who=$1 pkg=$2 suite=$3 apt=$4 cache=$5 refresh=${6:-0} deb
	mkdir -p "$cache"
	deb=$(verified_deb "$pkg" "$cache")
	if [[ -z $deb || $refresh == 1 ]]; then
		_download_deb "$who" "$pkg" "$suite" "$apt" "$cache" || return 1
		deb=$(verified_deb "$pkg" "$cache")
		[[ -n $deb ]] || { echo "$who: no verified $pkg in $cache after the download" >&2; return 1; }
	fi
	echo "$deb"
}

_download_deb() {
	local who=$1 pkg=$2 suite=$3 apt=$4 cache=$5 uri
	# the archive the machine's own release comes from
	# shellcheck disable=SC1091
	uri=$(apt_mirror "$(. /etc/os-release && echo "$VERSION_CODENAME")") || return 1
	rm -rf "$apt"
	mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/get"
	cat > "$apt/sources/$pkg.sources" <<-EOF
		Types: deb
		URIs: $uri
		Suites: $suite
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	local opts=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$apt/sources"
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root
		-o APT::Architecture="$(dpkg --print-architecture)")
	echo "$who: $pkg from $suite ($uri)" >&2
	apt-get -qq --error-on=any "${opts[@]}" update >&2 ||
		{ echo "$who: apt-get update for $suite failed" >&2; return 1; }
	local ver sha file
	ver=$(apt-cache "${opts[@]}" show --no-all-versions "$pkg" | awk '/^Version:/ { print $2; exit }')
	sha=$(apt-cache "${opts[@]}" show --no-all-versions "$pkg" | awk '/^SHA256:/ { print $2; exit }')
	[[ -n $ver && -n $sha ]] || { echo "$who: $pkg not in $suite" >&2; return 1; }
	# apt-get download checks the file against the index's hash and
	# leaves nothing where it failed
	(cd "$apt/get" && apt-get -qq "${opts[@]}" download "$pkg=$ver" >&2) ||
		{ echo "$who: apt-get download $pkg=$ver failed" >&2; return 1; }
	file=$(ls "$apt/get/${pkg}_"*.deb)
	[[ $(sha256sum "$file" | cut -d' ' -f1) == "$sha" ]] ||
		{ echo "$who: $(basename "$file") does not match the index's SHA256" >&2; return 1; }
	echo "$sha  $(basename "$file")" > "$file.sha256"
	# the .deb before its checksum: a .deb without one is not trusted
	mv -f "$file" "$cache/"
	mv -f "$file.sha256" "$cache/"
	rm -rf "$apt"
	echo "$who: $(basename "$file") ($(( $(stat -c %s "$cache/$(basename "$file")") >> 20 )) MiB) cached in $cache" >&2
}

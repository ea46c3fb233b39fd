#!/usr/bin/env bash
# Makes a fresh Debian 12 machine able to run Warden's sandboxes, with no
# container registry. Idempotent and quick when everything is there: run by the
# test command and by `npm start`.
#
#   bash scripts/setup.sh [--no-browser]
#
# Steps, one summary line each:
#   apt      Debian packages (apt-get update only if something is missing)
#   podman   `podman info` works: storage, cgroups, OCI runtime
#   userns   subordinate id ranges for per-sandbox user namespaces
#   image    localhost/warden-sandbox:<VERSION> via resources/image/build.sh
#   run      a sandbox starts with runc and the ulimits the engine passes
#   crun     reported only: the engine picks runc, crun breaks on cgroup v1 hosts
#   runsc    gVisor from bookworm-backports (adds that suite to apt's sources, on the
#            mirror the existing Debian sources use) and a sandbox starts with it
#
# It does not start a Podman API service: the engine owns that.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
browser=1
for arg in "$@"; do
  case "$arg" in
    --no-browser) browser=0 ;;
    -h | --help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { printf '[setup] %-7s %s\n' "$1:" "$2"; }
fail() { say "$1" "FAILED: $2" >&2; exit 1; }
start=$SECONDS

# --- apt ---------------------------------------------------------------------
# netavark/aardvark-dns/iptables: podman's default bridge network on bookworm;
# apt would otherwise be free to satisfy container-network-stack differently.
# gcc/libc6-dev: the static sandbox runner (resources/runner) is built from source by npm's prepare.
packages=(podman runc crun catatonit uidmap mmdebstrap fuse-overlayfs slirp4netns
  netavark aardvark-dns iptables sqlite3 gcc libc6-dev)
((browser)) && packages+=(chromium fonts-liberation)

missing=()
for p in "${packages[@]}"; do
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" == installed ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  say apt "already present (${#packages[@]} packages)"
else
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || fail apt "need root to install: ${missing[*]}"
    sudo=(sudo -n)
  fi
  log="$(mktemp)"
  export DEBIAN_FRONTEND=noninteractive
  # Waits for a concurrent apt/dpkg instead of failing on its lock.
  apt=("${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300)
  if ! "${apt[@]}" update >"$log" 2>&1 \
    || ! "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    fail apt "could not install ${missing[*]} (full log: $log)"
  fi
  rm -f "$log"
  say apt "installed ${missing[*]}"
fi

# --- podman ------------------------------------------------------------------
command -v podman >/dev/null || fail podman "podman not on PATH after install"
# Warnings go to their own file: on a fresh machine Podman warns about CNI plugins it does not use
# (the engine uses netavark), and mixed into the answer they garbled this summary line.
info_err="$(mktemp)"
if ! info="$(timeout 120 podman info --format '{{.Version.Version}} {{.Host.OCIRuntime.Name}} {{.Host.CgroupsVersion}} {{.Host.CgroupManager}} {{.Store.GraphDriverName}}' 2>"$info_err")"; then
  cat "$info_err" >&2
  rm -f "$info_err"
  fail podman "'podman info' fails: check /etc/containers/storage.conf and that /var/lib/containers is writable"
fi
rm -f "$info_err"
read -r pm_version pm_runtime pm_cgroups pm_cgmanager pm_driver <<<"$info"
say podman "ok: podman $pm_version, default runtime $pm_runtime, cgroups $pm_cgroups ($pm_cgmanager), storage $pm_driver"

# --- userns ------------------------------------------------------------------
# Every rootful sandbox gets a user namespace of its own (Podman's --userns=auto), so its root is
# an unprivileged host uid. Podman hands those ids out of the "containers" ranges in /etc/subuid
# and /etc/subgid (no such user needs to exist); Debian ships none. The range is the one Fedora's
# containers-common configures: the upper half of the 32-bit id space, clear of normal users.
userns_range="containers:2147483647:2147483648"
added=()
for f in /etc/subuid /etc/subgid; do
  if ! grep -q '^containers:' "$f" 2>/dev/null; then
    if ((EUID != 0)); then fail userns "need root to add '$userns_range' to $f"; fi
    echo "$userns_range" >>"$f"
    added+=("$f")
  fi
done
if ((${#added[@]})); then say userns "added $userns_range to ${added[*]}"; else say userns "subordinate ids for sandboxes present"; fi

# --- image -------------------------------------------------------------------
version="$(tr -d '[:space:]' <"$root/resources/image/VERSION")"
tag="localhost/warden-sandbox:$version"
if podman image exists "$tag"; then
  say image "$tag already present"
else
  t0=$SECONDS
  bash "$root/resources/image/build.sh" || fail image "resources/image/build.sh failed; see the [image] lines above"
  podman image exists "$tag" || fail image "build.sh finished but $tag does not exist"
  say image "$tag built in $((SECONDS - t0)) s"
fi

# --- run ---------------------------------------------------------------------
# Podman's default ulimits for root (nofile 1048576, nproc 4194304) can't be
# set where root lacks CAP_SYS_RESOURCE, as on these VMs, and podman itself
# lowers its nproc to kernel.pid_max: so sandboxes carry their own ulimits,
# at most the host's hard limits. These are the ceilings, for the smoke test.
nofile="$(ulimit -Hn)"
nproc="$(ulimit -Hu)"
pid_max="$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 32768)"
[[ "$nofile" == unlimited ]] && nofile=1048576
[[ "$nproc" == unlimited || "$nproc" -gt "$pid_max" ]] && nproc="$pid_max"
ulimits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

if ! out="$(podman run --rm --runtime runc "${ulimits[@]}" "$tag" python3 -c 'print(1)' 2>&1)" || [[ "$out" != 1 ]]; then
  printf '%s\n' "$out" >&2
  fail run "a sandbox does not start with: podman run --runtime runc ${ulimits[*]} $tag"
fi
note=""
if ! out="$(podman run --rm --network none "$tag" true 2>&1)"; then
  note="; plain 'podman run' (runtime $pm_runtime, podman's default ulimits) fails: $(tail -n 1 <<<"$out")"
fi
say run "ok with --runtime runc ${ulimits[*]}$note"

# --- crun --------------------------------------------------------------------
if ! command -v crun >/dev/null; then
  say crun "not installed (the engine uses runc)"
elif out="$(podman run --rm --runtime crun --network none "${ulimits[@]}" "$tag" true 2>&1)"; then
  say crun "installed and works (the engine still uses runc)"
else
  say crun "installed but broken here, left alone (the engine uses runc): $(tail -n 1 <<<"$out")"
fi

# --- runsc -------------------------------------------------------------------
# gVisor, the second tier. Bookworm main has only a 2022 build (ptrace platform only); the
# backports build has systrap. Podman gets resources/runtimes/runsc-warden by absolute path.
runsc_min=0.0~20240729
runsc_wrapper="$root/resources/runtimes/runsc-warden"
runsc_version() { dpkg-query -W -f='${Version}' runsc 2>/dev/null; }
if v="$(runsc_version)" && [[ -n "$v" ]] && dpkg --compare-versions "$v" ge "$runsc_min"; then
  say runsc "runsc $v already present"
else
  sudo=()
  ((EUID != 0)) && sudo=(sudo -n)
  added=""
  # Only bookworm needs backports; a later Debian's own suite has a recent enough runsc.
  codename="$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")"
  target=()
  [[ "$codename" == bookworm ]] && target=(-t bookworm-backports)
  if ((${#target[@]})) && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    # The mirror the existing bookworm sources use (deb822 `URIs:` or one-line `deb URI bookworm`).
    mirror="$(grep -hs -A3 '^URIs:' /etc/apt/sources.list.d/*.sources | grep -B3 -E '^Suites:.*\bbookworm\b' \
      | sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' | grep -v security | head -n 1)"
    [[ -z "$mirror" ]] && mirror="$(grep -hsE '^deb[[:space:]]+[^[:space:]]+[[:space:]]+bookworm[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
      | awk '{print $2}' | head -n 1)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    list=/etc/apt/sources.list.d/warden-bookworm-backports.list
    echo "deb $mirror bookworm-backports main" | "${sudo[@]}" tee "$list" >/dev/null \
      || fail runsc "could not write $list"
    added="; added 'deb $mirror bookworm-backports main' to $list"
  fi
  log="$(mktemp)"
  export DEBIAN_FRONTEND=noninteractive
  apt=("${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300)
  if ! "${apt[@]}" update >"$log" 2>&1 \
    || ! "${apt[@]}" install -y --no-install-recommends "${target[@]}" runsc >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    fail runsc "could not install runsc ${target[*]} (full log: $log)"
  fi
  rm -f "$log"
  say runsc "installed runsc $(runsc_version) ${target[*]:+from bookworm-backports}$added"
fi
[[ -x "$runsc_wrapper" ]] || chmod +x "$runsc_wrapper" 2>/dev/null || fail runsc "$runsc_wrapper is not executable"
# gVisor's kernel greets with "Starting gVisor..." in its own dmesg; the host's never does.
if ! out="$(podman run --rm --runtime "$runsc_wrapper" --network none "${ulimits[@]}" "$tag" dmesg 2>&1)" \
  || [[ "$out" != *"Starting gVisor"* ]]; then
  printf '%s\n' "$out" >&2
  fail runsc "a gVisor sandbox does not start with: podman run --runtime $runsc_wrapper --network none $tag"
fi
say runsc "ok: a sandbox runs in gVisor ($runsc_wrapper)"

say done "machine ready in $((SECONDS - start)) s"

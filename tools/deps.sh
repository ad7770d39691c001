#!/usr/bin/env bash
# deps.sh — installs the Debian/Ubuntu packages ddplab needs, and nothing else.
#
#   tools/deps.sh [slides|gradebook] [--list]
#
# Called by `make deps`, and so by `make run` and `make test`: on a fresh
# machine those two commands are the whole set-up. Says what it installs;
# does nothing (quickly) when everything is there. Uses sudo when not root.
# DL_NO_DEPS=1 skips it (for machines you manage yourself); --list prints the
# package names. `slides` is the set `make slides` adds (tools/slides.sh),
# `gradebook` the one `make gradebook` adds (tools/similarity.sh).
set -euo pipefail

# What each package is for (the kit probes what it finds; these make it whole).
pkgs=(
    build-essential        # gcc, make, libc headers
    pkg-config             # finds Check's flags
    check                  # unit tests and the grader (libcheck)
    libopenblas-dev        # OpenBLAS: dl_gemm / dl_gemv on the CPU (opened at run time: common/src/blas_cpu.c)
    libopenmpi-dev         # MPI: the CPU transport and NCCL's bootstrap
    openmpi-bin            # mpirun, used by common/bin/dlrun
    zlib1g-dev             # gzip-compressed IDX files (Fashion-MNIST)
    gnuplot-nox            # every plot (png, svg, terminal)
    fonts-dejavu-core      # the font the plots use
    dataset-fashion-mnist  # Fashion-MNIST in /usr/share/datasets/fashion-mnist
    patch                  # applies the grader's mutants
)
# Only for `make slides`: most users never build the decks.
slides_pkgs=(
    pandoc                 # slides/*.md into one HTML file per deck (dzslides)
)

# Only for `make gradebook`: the report of code shared between submissions.
gradebook_pkgs=(
    similarity-tester      # sim_c: C token runs shared between two files (tools/similarity.sh)
)

if [ "${1:-}" = slides ]; then
    pkgs=("${slides_pkgs[@]}")
    shift
elif [ "${1:-}" = gradebook ]; then
    pkgs=("${gradebook_pkgs[@]}")
    shift
fi
if [ "${1:-}" = --list ]; then
    echo "${pkgs[*]}"
    exit 0
fi
if [ "${DL_NO_DEPS:-0}" = 1 ]; then
    echo "deps: DL_NO_DEPS=1, not checking packages"
    exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: this is not a Debian/Ubuntu system; install the equivalents of:" >&2
    echo "      ${pkgs[*]}" >&2
    echo "      then run with DL_NO_DEPS=1" >&2
    exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "deps: missing packages: ${missing[*]}" >&2
        echo "deps: not root and no sudo; ask an administrator to run: apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/ddplab-apt.log 2>&1; then
    # One unknown package (dataset-fashion-mnist lives in Debian main and Ubuntu
    # universe) must not stop the others: retry one by one and say which failed.
    failed=()
    for p in "${missing[@]}"; do
        "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$p" >>/tmp/ddplab-apt.log 2>&1 || failed+=("$p")
    done
    if [ ${#failed[@]} -gt 0 ]; then
        echo "deps: could not install: ${failed[*]} (log: /tmp/ddplab-apt.log)" >&2
        case " ${failed[*]} " in
            *" dataset-fashion-mnist "*)
                echo "deps: without dataset-fashion-mnist, put the four Fashion-MNIST files (.gz or not) in a folder and set DL_DATA_DIR" >&2 ;;
        esac
        exit 1
    fi
fi
echo "deps: done"

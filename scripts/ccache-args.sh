# Sourced by scripts/build.sh and scripts/build-wasm.sh: sets CCACHE_ARGS,
# the CMake arguments that put ccache in front of the compilers when it is
# installed (scripts/install-deps.sh installs it), and CCACHE_NOTE for the
# build's first line. ccache keeps what each compile produced, keyed by its
# input and flags: a fresh checkout (CI's) rebuilds in a minute what takes
# ten. Paths are taken relative to the checkout ($1) so that another
# checkout's objects match. SHARDLAB_CCACHE=0 turns it off.
ccache_args() {
  local root="$1" launcher
  if [[ "${SHARDLAB_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null 2>&1; then
    launcher="env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;ccache"
    CCACHE_ARGS=("-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" "-DCMAKE_C_COMPILER_LAUNCHER=$launcher")
    CCACHE_NOTE=" with ccache"
  else
    CCACHE_ARGS=(-UCMAKE_CXX_COMPILER_LAUNCHER -UCMAKE_C_COMPILER_LAUNCHER)
    CCACHE_NOTE=""
  fi
}

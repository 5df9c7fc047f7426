#!/usr/bin/env bash
# One GPU session for issue 46, start to end: builds the collectors on the
# GPU machine, measures the GEMM and collective tables, exports, compiles and
# times the single-GPU JAX programs, and has the machine's Shardy propagate
# the sharded ones. Everything lands under --out, with one log a stage and
# manifest.json saying what ran, for how long, and what failed and why;
# bench/gpu/ingest.py turns that folder into tables, estimates and corpus.
set -uo pipefail

usage() {
  cat <<'EOF'
Usage: bash bench/gpu/session.sh [--out DIR] [--stages LIST] [--minutes N]
                                 [--build-dir DIR] [--redo] [--dry-run]

Stages, in this order (the most useful first, so a short session still
brings something back):
  env          nvidia-smi, CUDA/NCCL/JAX versions, the GPU's compute capability
  build        cmake + build of shardlab-collect-gemm / -collectives for this
               GPU's architecture (installs missing Debian packages when root)
  gemm         cuBLASLt sweep: bf16, f16, f32 (fp8 on sm_89+); b 1, 2, 4 and
               m, n, k 256..8192 (XLA's grid and one step more)
  programs     bench/gpu/programs.py: 20 single-GPU JAX programs, StableHLO,
               XLA's optimized HLO, median of 50 timed calls
  overlap      bench/gpu/overlap.py under torchrun: a GEMM and an NCCL
               collective each alone and both at once, the slowdowns (2+ GPUs)
  sharded      bench/gpu/sharded_programs.py: 51 sharded programs on 8 virtual
               CPU devices, Shardy's modules before and after propagation
  collectives  NCCL sweep over the visible GPUs (needs 2 or more)

  --out DIR        results (default: $OUT/gpu-session when $OUT is set, else
                   out/gpu-session)
  --stages LIST    comma-separated subset (default: all)
  --minutes N      the session's length; each stage gets a share, the
                   collective sweep what is left (default 45)
  --build-dir DIR  where the collectors are built (default: build-gpu)
  --redo           run stages that already finished (default: skip them; the
                   sweeps resume from their tables either way)
  --dry-run        no GPU: plans and lists only (sweeps --dry-run, programs
                   --list), binaries taken from --build-dir as they are
EOF
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT_DIR=${OUT:+$OUT/gpu-session}
OUT_DIR=${OUT_DIR:-$ROOT/out/gpu-session}
STAGES=env,build,gemm,programs,overlap,sharded,collectives
MINUTES=45
BUILD_DIR=$ROOT/build-gpu
REDO=0
DRY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT_DIR=$2; shift 2 ;;
    --stages) STAGES=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --redo) REDO=1; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "session.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ $MINUTES =~ ^[0-9]+$ ]] || (( MINUTES < 5 )); then
  echo "session.sh: --minutes wants a whole number >= 5, got '$MINUTES'" >&2
  exit 2
fi
mkdir -p "$OUT_DIR/logs" "$OUT_DIR/stages"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
BUILD_DIR=$(mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && pwd)
SESSION_START=$(date +%s)

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
seconds_left() { echo $(( MINUTES * 60 - ($(date +%s) - SESSION_START) )); }

# The share of the session a stage may take, in seconds (never past its end).
budget() {
  local share
  case "$1" in
    env) share=1 ;; build) share=20 ;; gemm) share=20 ;; programs) share=20 ;; overlap) share=5 ;;
    sharded) share=10 ;; *) share=100 ;;
  esac
  local want=$(( MINUTES * 60 * share / 100 )) left
  left=$(seconds_left)
  (( want > left )) && want=$left
  echo $(( want > 30 ? want : 30 ))
}

# sm_XY of GPU 0 as "XY", or empty without a GPU.
compute_capability() {
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .'
}
gpu_count() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
  nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true
}

stage_env() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "gpus: $(gpu_count)"
    echo "compute capability: $(compute_capability)"
    command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -2
    python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__)' 2>&1 | tail -1
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())' 2>&1 | tail -1
  } > "$OUT_DIR/env.txt"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -q > "$OUT_DIR/nvidia-smi-q.txt" 2>&1 || true
    nvidia-smi topo -m > "$OUT_DIR/nvidia-smi-topo.txt" 2>&1 || true
  fi
  cat "$OUT_DIR/env.txt"
}

# NCCL from NVIDIA's Python wheel when the system has none (as on machines
# whose CUDA libraries come with PyTorch/JAX).
nccl_args() {
  ldconfig -p 2>/dev/null | grep -q 'libnccl\.so' && return 0
  local sp
  sp=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null) || return 0
  [[ -f $sp/nvidia/nccl/lib/libnccl.so.2 ]] || return 0
  echo "-DNCCL_ROOT=$sp/nvidia/nccl -DNCCL_LIBRARY=$sp/nvidia/nccl/lib/libnccl.so.2"
  export LD_LIBRARY_PATH=$sp/nvidia/nccl/lib:$sp/nvidia/cublas/lib:${LD_LIBRARY_PATH:-}
}

stage_build() {
  if (( DRY )); then
    for b in shardlab-collect-gemm shardlab-collect-collectives; do
      [[ -x $BUILD_DIR/$b ]] || { echo "dry run: $BUILD_DIR/$b is not built"; return 1; }
    done
    echo "dry run: the collectors of $BUILD_DIR as they are"
    return 0
  fi
  local missing=()
  for h in nlohmann/json.hpp tsl/robin_map.h fast_float/fast_float.h; do
    [[ -f /usr/include/$h ]] || missing+=("$h")
  done
  if (( ${#missing[@]} )); then
    echo "missing headers: ${missing[*]}"
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        cmake ninja-build g++ nlohmann-json3-dev robin-map-dev libfast-float-dev || return 1
    else
      echo "not root or no apt-get: install nlohmann-json3-dev robin-map-dev libfast-float-dev"
      return 1
    fi
  fi
  # CMake >= 3.25 (the project's minimum); an older distribution's from pip.
  if ! cmake --version 2>/dev/null | awk 'NR==1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 25)) }'; then
    echo "cmake $(cmake --version 2>/dev/null | head -1) is older than 3.25: taking cmake and ninja from pip"
    python3 -m pip install --quiet --user 'cmake>=3.25' ninja || return 1
    export PATH=$HOME/.local/bin:$PATH
  fi
  local arch generator=()
  arch=$(compute_capability)
  command -v ninja >/dev/null && generator=(-G Ninja)
  # shellcheck disable=SC2046
  cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSHARDLAB_BUILD_TESTS=OFF -DSHARDLAB_BUILD_BENCH=OFF \
    ${arch:+-DCMAKE_CUDA_ARCHITECTURES=$arch} $(nccl_args) || return 1
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target shardlab-collect-gemm shardlab-collect-collectives || return 1
  "$BUILD_DIR/shardlab-collect-gemm" --version
}

stage_gemm() {
  local dtypes=bf16,f16,f32 cc
  cc=$(compute_capability)
  [[ -n $cc ]] && (( cc >= 89 )) && dtypes=$dtypes,fp8
  mkdir -p "$OUT_DIR/tables"
  if (( DRY )); then
    "$BUILD_DIR/shardlab-collect-gemm" --dry-run -d "$dtypes" -e 8192 > "$OUT_DIR/tables/gemm-plan.txt" || return 1
    tail -1 "$OUT_DIR/tables/gemm-plan.txt"
    return 0
  fi
  # XLA's grid (256..4096) and 8192, the size of the programs' GEMMs, so
  # that their estimates test the model, not an extrapolation.
  "$BUILD_DIR/shardlab-collect-gemm" -d "$dtypes" -e 8192 --out "$OUT_DIR/tables/gemm.shardlab.json"
}

stage_programs() {
  mkdir -p "$OUT_DIR/programs"
  if (( DRY )); then
    python3 "$ROOT/bench/gpu/programs.py" --list > "$OUT_DIR/programs/list.txt" || return 1
    tail -1 "$OUT_DIR/programs/list.txt"
    return 0
  fi
  python3 "$ROOT/bench/gpu/programs.py" --out "$OUT_DIR/programs" --iters 50
}

stage_overlap() {
  local n
  n=$(gpu_count)
  if (( DRY )); then
    python3 "$ROOT/bench/gpu/overlap.py" --list > "$OUT_DIR/overlap-plan.txt" || return 1
    tail -1 "$OUT_DIR/overlap-plan.txt"
    return 0
  fi
  if (( n < 2 )); then
    echo "$n GPU(s): a collective needs 2 or more"
    return 3
  fi
  python3 -m torch.distributed.run --standalone --nproc_per_node="$n" \
    "$ROOT/bench/gpu/overlap.py" --out "$OUT_DIR/overlap.json"
}

stage_sharded() {
  mkdir -p "$OUT_DIR/sharded"
  if (( DRY )); then
    python3 "$ROOT/bench/gpu/sharded_programs.py" --list > "$OUT_DIR/sharded/list.txt" || return 1
    tail -1 "$OUT_DIR/sharded/list.txt"
    return 0
  fi
  # CPU only: JAX must not take the GPUs' memory from the other stages.
  JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES= \
    XLA_FLAGS="--xla_force_host_platform_device_count=8 --xla_dump_to=$OUT_DIR/sharded/xla-dump" \
    python3 "$ROOT/bench/gpu/sharded_programs.py" --out "$OUT_DIR/sharded"
}

stage_collectives() {
  local n
  n=$(gpu_count)
  mkdir -p "$OUT_DIR/tables"
  if (( DRY )); then
    "$BUILD_DIR/shardlab-collect-collectives" --dry-run > "$OUT_DIR/tables/collectives-plan.txt" || return 1
    tail -1 "$OUT_DIR/tables/collectives-plan.txt"
    return 0
  fi
  if (( n < 2 )); then
    echo "$n GPU(s): a collective needs 2 or more"
    return 3  # skipped, not failed
  fi
  # bf16 and f32 to 1 GiB: XLA's message sizes in a training step.
  "$BUILD_DIR/shardlab-collect-collectives" -g "$n" -d f32,bf16 -e 1G \
    --out "$OUT_DIR/tables/collectives-${n}gpu.shardlab.json"
}

run_stage() {
  local name=$1 rc start limit
  if (( !REDO )) && [[ -f $OUT_DIR/stages/$name.rc && $(cat "$OUT_DIR/stages/$name.rc") == 0 ]]; then
    log "$name: done in an earlier run (--redo runs it again)"
    return 0
  fi
  limit=$(budget "$name")
  log "$name: started, at most ${limit} s (log: $OUT_DIR/logs/$name.log)"
  start=$(date +%s)
  # Each stage in a subshell under timeout's watch, its output in its log.
  export -f "stage_$name" compute_capability gpu_count nccl_args
  export ROOT OUT_DIR BUILD_DIR DRY
  timeout --kill-after=30 "$limit" bash -c "stage_$name" > "$OUT_DIR/logs/$name.log" 2>&1
  rc=$?
  echo "$rc" > "$OUT_DIR/stages/$name.rc"
  echo $(( $(date +%s) - start )) > "$OUT_DIR/stages/$name.seconds"
  case $rc in
    0) log "$name: ok in $(cat "$OUT_DIR/stages/$name.seconds") s" ;;
    3) log "$name: skipped: $(tail -1 "$OUT_DIR/logs/$name.log")" ;;
    124|137) log "$name: stopped at its time limit (${limit} s); a rerun resumes the sweeps" ;;
    *) log "$name: FAILED (exit $rc); last lines of its log:"; tail -5 "$OUT_DIR/logs/$name.log" >&2 ;;
  esac
}

write_manifest() {
  python3 - "$OUT_DIR" "$STAGES" "$DRY" <<'EOF'
import json, os, sys, datetime
out, stages, dry = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1"
def read(p):
    try:
        return open(p).read().strip()
    except OSError:
        return None
manifest = {"written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "dry_run": dry, "env": read(os.path.join(out, "env.txt")), "stages": {}}
for s in stages:
    rc = read(os.path.join(out, "stages", s + ".rc"))
    manifest["stages"][s] = {"exit": None if rc is None else int(rc),
                             "seconds": None if read(os.path.join(out, "stages", s + ".seconds")) is None
                             else int(read(os.path.join(out, "stages", s + ".seconds"))),
                             "log": "logs/%s.log" % s}
with open(os.path.join(out, "manifest.json.tmp"), "w") as f:
    json.dump(manifest, f, indent=1)
os.replace(os.path.join(out, "manifest.json.tmp"), os.path.join(out, "manifest.json"))
EOF
}

IFS=, read -r -a chosen <<< "$STAGES"
for s in "${chosen[@]}"; do
  if ! declare -f "stage_$s" >/dev/null; then
    echo "session.sh: no stage '$s' (env, build, gemm, programs, overlap, sharded, collectives)" >&2
    exit 2
  fi
done
failed=0
for s in "${chosen[@]}"; do
  if (( $(seconds_left) < 30 )); then
    log "$s: not started, the session's ${MINUTES} min are up"
    echo 125 > "$OUT_DIR/stages/$s.rc"
    failed=1
    continue
  fi
  run_stage "$s"
  case $(cat "$OUT_DIR/stages/$s.rc") in 0|3) ;; *) failed=1 ;; esac
done
write_manifest
log "results: $OUT_DIR (manifest.json); bring the folder back and run bench/gpu/ingest.py on it"
exit $failed

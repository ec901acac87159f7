#!/usr/bin/env bash
# Regenerates the committed GPU code in kernels/gen from the CUDA sources,
# kernels/NAME/NAME.cu, each in the package that launches it.
# Needs nvcc (CUDA 12.x or 13.x; the committed files come from 13.0).
#
#   kernels/scripts/gen.sh                  # rewrite kernels/gen from every .cu
#   kernels/scripts/gen.sh OUTDIR [NAME...] # write elsewhere, or only some
#                                           # (bench/gpu.sh compares)
#
# For each NAME.cu it writes NAME.ptx (compute_80: any Ampere or later GPU
# JIT-compiles it), NAME.sm90.ptx (compute_90, the source of the Hopper code)
# and NAME.fatbin (sm_90 machine code plus the compute_80 PTX), which Go
# embeds; and NAME.resources, ptxas's register and spill report.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/gen}
nvcc=${NVCC:-nvcc}
mkdir -p "$out"
shift || true
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for src in "$here"/*/*.cu; do names+=("$(basename "$src" .cu)"); done
fi
flags=(-O3 -std=c++17)
status=0
for name in "${names[@]}"; do
	src=$here/$name/$name.cu
	# One module failing to build does not stop the others.
	if ! { "$nvcc" "${flags[@]}" -ptx -arch=compute_80 -o "$out/$name.ptx" "$src" &&
		"$nvcc" "${flags[@]}" -ptx -arch=compute_90 -o "$out/$name.sm90.ptx" "$src" &&
		"$nvcc" "${flags[@]}" -fatbin -Xptxas -v \
			-gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90 \
			-o "$out/$name.fatbin" "$src" 2>"$out/$name.resources"; }; then
		echo "gen.sh: nvcc failed on $src" >&2
		cat "$out/$name.resources" >&2 2>/dev/null
		status=1
	fi
done
"$nvcc" --version | tail -n 2 >"$out/NVCC_VERSION"
exit $status

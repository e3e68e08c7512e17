# Sourced by the GPU scripts: puts the folders holding cuDNN 9 (libcudnn.so.9,
# for cuda plans' fused attention steps) and the CUDA runtime (libcudart.so.13,
# which cudnn-frontend loads) on LD_LIBRARY_PATH. On the GPU machine both come
# with PyTorch's nvidia-* wheels; says so when one is missing.
genesis_cuda_lib_dirs=$(python3 - <<'PY'
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages(), "/usr/local/cuda/lib64"]
found = []
for name in ("libcudnn.so.9", "libcudart.so.13"):
    hits = [p for r in roots for p in glob.glob(os.path.join(r, "**", name), recursive=True)]
    if hits:
        found.append(os.path.dirname(hits[0]))
    else:
        print(f"[cuda-libs] {name} not found under {roots}", file=sys.stderr)
print(":".join(dict.fromkeys(found)))
PY
)
if [ -n "$genesis_cuda_lib_dirs" ]; then
  export LD_LIBRARY_PATH="$genesis_cuda_lib_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "[cuda-libs] LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

# Sourced by validate.sh (and by hand: `. DIR/env.sh`): puts the NVIDIA libraries of python3's
# environment (PyTorch's wheels: cuBLAS under nvidia/cu13/lib, cuDNN under nvidia/cudnn/lib) on
# LD_LIBRARY_PATH, after whatever the binaries' RUNPATH already finds. Harmless where none exist.
_salus_nv=$(python3 - 2>/dev/null <<'PY'
import glob, os, site, sys
roots = [p for p in site.getsitepackages() + [site.getusersitepackages()] if os.path.isdir(p)]
dirs = []
for r in roots:
    for sub in ("nvidia/cu13/lib", "nvidia/cudnn/lib", "nvidia/cublas/lib", "nvidia/cuda_runtime/lib"):
        d = os.path.join(r, sub)
        if os.path.isdir(d) and d not in dirs:
            dirs.append(d)
print(":".join(dirs))
PY
)
if [ -n "$_salus_nv" ]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$_salus_nv"
fi
unset _salus_nv
# Hardware work queues for the process's streams: the driver's default is 8, and PACK opened 9-13
# lanes on the H100 (runs 3 and 4), so lanes shared queues and their kernels could wait for each
# other. 32 is the most the driver gives; the profile and the runs of a validation share it, so the
# catalog predicts what the runs see. Set by the caller, it is left as it is.
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}

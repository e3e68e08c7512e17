# Writes the inputs of the linear model's train_step (tests/lit/passes/
# train-step.mlir) into argv[1]: x.npy f32[4,3], t.npy f32[4,2], and
# x2.npy f32[2,4,3] and t2.npy f32[2,4,2] (a stream of two batches), and
# params.safetensors with w f32[3,2], b f32[2] and the learning rate lr f32[].
import json
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
np.save(os.path.join(out, "x.npy"),
        np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
np.save(os.path.join(out, "t.npy"), np.ones((4, 2), dtype=np.float32))
# Two batches for genesis-run --repeat 2 --batches: the first is x and t.
np.save(os.path.join(out, "x2.npy"),
        np.stack([np.load(os.path.join(out, "x.npy")),
                  np.full((4, 3), -0.5, np.float32)]))
np.save(os.path.join(out, "t2.npy"), np.ones((2, 4, 2), dtype=np.float32))
tensors = {"w": np.full((3, 2), 0.5, np.float32),
           "b": np.zeros(2, np.float32),
           "lr": np.array(0.01, np.float32)}
header, blobs = {}, b""
for name, array in tensors.items():
    header[name] = {"dtype": "F32", "shape": list(array.shape),
                    "data_offsets": [len(blobs), len(blobs) + array.nbytes]}
    blobs += array.tobytes()
text = json.dumps(header).encode()
with open(os.path.join(out, "params.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + blobs)

#!/usr/bin/env python3
"""Writes Hugging Face golden models and logits for tests/unit/models/HfModelsTest.cpp.

For a tiny GPT2LMHeadModel (tied embeddings) and a tiny Qwen2ForCausalLM
(untied lm_head, grouped-query attention) with seeded random weights, writes
into <out>/gpt2-tiny and <out>/qwen2-tiny:

  config.json, model.safetensors   save_pretrained(safe_serialization=True)
  input_ids.npy                    int64 [2, 16]
  logits.npy                       float32 [2, 16, vocab], computed in f32

Every parameter, biases and norm weights included, is drawn at random (HF's
own initialisation zeroes biases and sets norm weights to one, which would
leave those paths untested). The weights are stored in half precision (GPT-2
float16, Qwen2 bfloat16) to keep the files small and to exercise the loader's
conversion; the logits come from the same weights widened back to float32, so
they are exactly the weights the C++ loader sees. Qwen2 runs with
attn_implementation="eager" so that the reference is plain math.

  --verify DIR --model gpt2|qwen2   loads DIR (a directory Genesis wrote with
      saveGpt2 / saveQwen2) with from_pretrained and prints the largest
      difference between its logits and the golden ones; exits 1 above 1e-4.

  --model KIND (without --verify) writes only that model.

qwen2-tiny-v5 (RoPE theta 1e6, 6 heads over 3 KV heads, untied head) is the
checkpoint format of transformers 5.x, which keeps theta under
rope_parameters; it was written on the GPU machine, whose PyTorch carries
transformers 5.x:

  python3 scripts/golden/hf_logits.py --model qwen2-v5 --out $OUT

The other two were written with transformers==4.44.2 (the system torch 1.13
is too old for later releases), safetensors 0.8.0, numpy 1.24:

  /usr/bin/python3 -m venv --system-site-packages /work/venv-hf
  /work/venv-hf/bin/pip install 'transformers==4.44.2' safetensors
  /work/venv-hf/bin/python scripts/golden/hf_logits.py [--out DIR]
"""
import argparse
import os
import sys

import numpy as np
import torch
from transformers import (GPT2Config, GPT2LMHeadModel, Qwen2Config,
                          Qwen2ForCausalLM)

BATCH, SEQ = 2, 16
TOLERANCE = 1e-4


def gpt2_tiny():
    config = GPT2Config(vocab_size=256, n_positions=32, n_embd=32, n_layer=2,
                        n_head=4, layer_norm_epsilon=1e-5,
                        activation_function="gelu_new",
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        tie_word_embeddings=True)
    return GPT2LMHeadModel(config), torch.float16


def qwen2_tiny():
    config = Qwen2Config(vocab_size=256, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=64,
                         rms_norm_eps=1e-6, rope_theta=10000.0,
                         tie_word_embeddings=False, attention_dropout=0.0,
                         attn_implementation="eager")
    return Qwen2ForCausalLM(config), torch.bfloat16


def qwen2_v5_tiny():
    """The Qwen2 of a current transformers (5.x) checkpoint: RoPE theta 1e6,
    which 5.x saves only under rope_parameters, 6 heads over 3 KV heads, an
    untied head."""
    common = dict(vocab_size=256, hidden_size=48, intermediate_size=96,
                  num_hidden_layers=2, num_attention_heads=6,
                  num_key_value_heads=3, max_position_embeddings=64,
                  rms_norm_eps=1e-6, tie_word_embeddings=False,
                  attention_dropout=0.0, attn_implementation="eager")
    try:  # transformers >= 5
        config = Qwen2Config(rope_parameters={"rope_type": "default",
                                              "rope_theta": 1e6}, **common)
    except TypeError:
        config = Qwen2Config(rope_theta=1e6, **common)
    return Qwen2ForCausalLM(config), torch.bfloat16


MODELS = {"gpt2": ("gpt2-tiny", gpt2_tiny), "qwen2": ("qwen2-tiny", qwen2_tiny),
          "qwen2-v5": ("qwen2-tiny-v5", qwen2_v5_tiny)}


def randomize(model, seed):
    """N(0, 0.2) for every matrix and bias, 1 + N(0, 0.1) for norm weights:
    activations stay O(1) at width 32 and every parameter matters."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            is_norm = "ln" in name or "norm" in name
            if is_norm and name.endswith("weight"):
                parameter.copy_(1.0 + 0.1 * noise)
            else:
                parameter.copy_(0.2 * noise)


def logits_of(model, ids):
    with torch.no_grad():
        return model(torch.from_numpy(ids), use_cache=False).logits.float().numpy()


def write(kind, out_root, seed):
    directory, build = MODELS[kind]
    torch.manual_seed(seed)
    model, storage_dtype = build()
    model.eval()
    randomize(model, seed)
    # Round the parameters (not buffers such as RoPE's inv_freq, which the
    # file does not hold) to the storage precision; compute in f32.
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(parameter.to(storage_dtype).float())
    ids = np.random.default_rng(seed).integers(
        0, model.config.vocab_size, size=(BATCH, SEQ), dtype=np.int64)
    logits = logits_of(model, ids)

    path = os.path.normpath(os.path.join(out_root, directory))
    os.makedirs(path, exist_ok=True)
    model.to(storage_dtype).save_pretrained(path, safe_serialization=True)
    np.save(os.path.join(path, "input_ids.npy"), ids)
    np.save(os.path.join(path, "logits.npy"), logits.astype(np.float32))
    size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    print(f"{path}: {size} bytes, logits in [{logits.min():.3f}, "
          f"{logits.max():.3f}]")


def verify(kind, directory, golden_root):
    model_class = GPT2LMHeadModel if kind == "gpt2" else Qwen2ForCausalLM
    extra = {} if kind == "gpt2" else {"attn_implementation": "eager"}
    model = model_class.from_pretrained(directory, torch_dtype=torch.float32,
                                        **extra).eval()
    golden = os.path.join(golden_root, MODELS[kind][0])
    ids = np.load(os.path.join(golden, "input_ids.npy"))
    expected = np.load(os.path.join(golden, "logits.npy"))
    difference = np.abs(logits_of(model, ids) - expected).max()
    print(f"{directory}: largest |logit difference| {difference:.3g}")
    return difference <= TOLERANCE


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "..", "tests", "data", "hf")
    parser.add_argument("--out", default=default_out)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--verify", metavar="DIR")
    parser.add_argument("--model", choices=sorted(MODELS))
    args = parser.parse_args()
    if args.verify:
        if not args.model:
            parser.error("--verify needs --model")
        sys.exit(0 if verify(args.model, args.verify, args.out) else 1)
    import transformers
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    for kind in [args.model] if args.model else sorted(MODELS):
        write(kind, args.out, args.seed)


if __name__ == "__main__":
    main()

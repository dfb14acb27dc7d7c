#!/usr/bin/python3
"""An independent PyTorch (eager, CPU) implementation of gonka-diloco's model,
written from Hugging Face LlamaForCausalLM's semantics: RMSNorm, rotary
embeddings with rotate_half, grouped-query attention with repeat_kv, SwiGLU,
optionally tied output embeddings. It reads the project's checkpoints
(safetensors, parsed here with numpy) and llm.c token shards itself, so it
shares no code with the C implementation.

  torch_llama.py eval  --checkpoint CKPT --tokens SHARD --batch B --seq T --batches N
      mean cross-entropy over the evaluation windows gonka-diloco documents
      (eval window k = b*B + j is window (k*s) mod M of the M = (len - 1) // T
      windows at a stride of T, s coprime to M near M / golden ratio; see
      eval_starts), in float64; JSON out.
  torch_llama.py bench --checkpoint CKPT --threads N --batch B --seq T --steps S
      training throughput of the same model in float32 with torch.optim.AdamW
      (betas 0.9/0.95, weight decay 0.1 on matrices), global-norm clipping 1.0;
      JSON out.
"""
import argparse
import contextlib
import json
import math
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I32": np.int32}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw[base + begin : base + end], dtype=np.uint16)
            array = (bits.astype(np.uint32) << 16).view(np.float32)
        else:
            array = np.frombuffer(raw[base + begin : base + end], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).astype(np.float64)
    return meta, tensors


def read_shard(path):
    header = np.fromfile(path, dtype="<i4", count=256)
    magic, version, count = int(header[0]), int(header[1]), int(header[2])
    if (magic, version) == (20240520, 1):
        dtype = "<u2"
    elif (magic, version) == (20240801, 7):
        dtype = "<u4"
    else:
        raise SystemExit(f"{path}: not an llm.c token shard")
    tokens = np.fromfile(path, dtype=dtype, offset=1024)
    if len(tokens) != count:
        raise SystemExit(f"{path}: header says {count} tokens, file holds {len(tokens)}")
    return tokens.astype(np.int64)


class Llama(torch.nn.Module):
    def __init__(self, cfg, dtype):
        super().__init__()
        self.cfg = cfg
        h, f, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
        self.heads = cfg["num_attention_heads"]
        self.kv_heads = cfg.get("num_key_value_heads", self.heads)
        self.head_dim = h // self.heads
        self.eps = cfg.get("rms_norm_eps", 1e-6)
        self.theta = cfg.get("rope_theta", 10000.0)
        self.tied = cfg.get("tie_word_embeddings", False)
        p = lambda *shape: torch.nn.Parameter(torch.zeros(*shape, dtype=dtype))
        self.embed = p(v, h)
        self.layers = torch.nn.ModuleList()
        for _ in range(cfg["num_hidden_layers"]):
            layer = torch.nn.Module()
            layer.input_norm = p(h)
            layer.q = p(self.heads * self.head_dim, h)
            layer.k = p(self.kv_heads * self.head_dim, h)
            layer.v = p(self.kv_heads * self.head_dim, h)
            layer.o = p(h, self.heads * self.head_dim)
            layer.post_norm = p(h)
            layer.gate = p(f, h)
            layer.up = p(f, h)
            layer.down = p(h, f)
            self.layers.append(layer)
        self.norm = p(h)
        self.lm_head = None if self.tied else p(v, h)

    def load(self, tensors):
        def put(param, name):
            param.data.copy_(torch.from_numpy(tensors[name]).to(param.dtype))

        put(self.embed, "model.embed_tokens.weight")
        for i, layer in enumerate(self.layers):
            pre = f"model.layers.{i}."
            put(layer.input_norm, pre + "input_layernorm.weight")
            put(layer.q, pre + "self_attn.q_proj.weight")
            put(layer.k, pre + "self_attn.k_proj.weight")
            put(layer.v, pre + "self_attn.v_proj.weight")
            put(layer.o, pre + "self_attn.o_proj.weight")
            put(layer.post_norm, pre + "post_attention_layernorm.weight")
            put(layer.gate, pre + "mlp.gate_proj.weight")
            put(layer.up, pre + "mlp.up_proj.weight")
            put(layer.down, pre + "mlp.down_proj.weight")
        put(self.norm, "model.norm.weight")
        if not self.tied:
            put(self.lm_head, "lm_head.weight")

    def rms_norm(self, x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    @staticmethod
    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    def forward(self, inputs):
        b, t = inputs.shape
        d = self.head_dim
        dtype = self.embed.dtype
        inv_freq = 1.0 / (self.theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        freqs = torch.outer(torch.arange(t, dtype=torch.float64), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(dtype).to(inputs.device), emb.sin().to(dtype).to(inputs.device)
        mask = torch.full((t, t), float("-inf"), dtype=dtype).triu(1)
        x = self.embed[inputs]
        for layer in self.layers:
            hn = self.rms_norm(x, layer.input_norm)
            q = (hn @ layer.q.T).view(b, t, self.heads, d).transpose(1, 2)
            k = (hn @ layer.k.T).view(b, t, self.kv_heads, d).transpose(1, 2)
            v = (hn @ layer.v.T).view(b, t, self.kv_heads, d).transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            if getattr(self, "fused", False):
                # The GPU peer: PyTorch's fused (flash or memory-efficient) attention.
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) / math.sqrt(d) + mask.to(q.device)
                y = att.softmax(dim=-1) @ v
            y = y.transpose(1, 2).reshape(b, t, self.heads * d)
            x = x + y @ layer.o.T
            hn = self.rms_norm(x, layer.post_norm)
            x = x + (F.silu(hn @ layer.gate.T) * (hn @ layer.up.T)) @ layer.down.T
        x = self.rms_norm(x, self.norm)
        head = self.embed if self.tied else self.lm_head
        return x @ head.T


def load_model(path, dtype):
    meta, tensors = read_safetensors(path)
    cfg = json.loads(meta["config"])
    model = Llama(cfg, dtype)
    model.load(tensors)
    return cfg, model


def eval_starts(n_tokens, seq, count):
    """The first token of eval windows 0..count-1 (trainer/data.h): M windows
    at a stride of seq fit; window k is window (k*s) mod M, s the first
    integer >= floor(M * 0x9E3779B97F4A7C15 / 2^64) coprime to M."""
    m = (n_tokens - 1) // seq if n_tokens > seq else 0
    s = (m * 0x9E3779B97F4A7C15) >> 64
    while math.gcd(s, m) != 1:
        s += 1
    return [(k * s % m) * seq for k in range(min(count, m))]


def cmd_eval(args):
    torch.set_num_threads(args.threads)
    _, model = load_model(args.checkpoint, torch.float64)
    tokens = read_shard(args.tokens)
    b_, t_ = args.batch, args.seq
    total, scored = 0.0, 0
    with torch.no_grad():
        starts = eval_starts(len(tokens), t_, args.batches * b_)
        for b in range(len(starts) // b_):
            rows = [tokens[p : p + t_ + 1] for p in starts[b * b_ : (b + 1) * b_]]
            w = torch.from_numpy(np.stack(rows))
            logits = model(w[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1),
                                   reduction="sum")
            total += float(loss)
            scored += b_ * t_
    print(json.dumps({"loss": total / scored if scored else None, "tokens": scored}))


def cmd_bench(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    cfg, model = load_model(args.checkpoint, torch.float32)
    dev = torch.device(args.device)
    model = model.to(dev)
    # On a GPU the peer is PyTorch at its usual best: fp32 master weights,
    # bf16 autocast, fused attention.
    model.fused = args.device == "cuda"
    amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if args.device == "cuda" \
        else contextlib.nullcontext()
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() == 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    v = cfg["vocab_size"]

    def step():
        w = torch.randint(0, min(v, 16), (args.batch, args.seq + 1), device=dev)
        with amp:
            logits = model(w[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, v).float(), w[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for _ in range(args.warmup):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    sync()
    step_s = (time.perf_counter() - t0) / args.steps
    print(json.dumps({"tokens_per_s": args.batch * args.seq / step_s, "step_ms": step_s * 1e3,
                      "threads": args.threads, "batch": args.batch, "seq": args.seq,
                      "params": sum(p.numel() for p in model.parameters()),
                      "torch": torch.__version__, "device": args.device}))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--tokens", required=True)
    e.add_argument("--batch", type=int, default=4)
    e.add_argument("--seq", type=int, default=64)
    e.add_argument("--batches", type=int, default=2)
    e.add_argument("--threads", type=int, default=1)
    b = sub.add_parser("bench")
    b.add_argument("--checkpoint", required=True)
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--batch", type=int, default=8)
    b.add_argument("--seq", type=int, default=256)
    b.add_argument("--steps", type=int, default=3)
    b.add_argument("--warmup", type=int, default=1)
    b.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cuda: bf16 autocast and fused attention on the GPU")
    args = ap.parse_args()
    {"eval": cmd_eval, "bench": cmd_bench}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes the model workloads in workloads/builtin/ from their architecture descriptions.

The JSON files are what npu-run reads; this script only saves typing the layer lists
(ResNet-50's 53 convolutions, a transformer's layers). Run it after changing a model here.
Pooling has no NPU kernel in the emulator's registry yet: max/avg pooling is represented by
a memory-bound pass over the tensor (aten::relu / aten::mean), which is what it costs.
"""
import json
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "workloads", "builtin")


def conv_out(h, k, s, p):
    return (h + 2 * p - k) // s + 1


def conv_bn(layers, n, cin, cout, h, k, s, relu=True, repeat=1):
    p = k // 2
    ho = conv_out(h, k, s, p)
    layers.append({"op": "conv2d", "inputs": [[n, cin, h, h], [cout, cin, k, k]],
                   "attrs": {"strides": [s, s], "pads": [p, p]}, "repeat": repeat})
    layers.append({"op": "batch_norm", "inputs": [[n, cout, ho, ho], [cout], [cout]], "repeat": repeat})
    if relu:
        layers.append({"op": "relu", "inputs": [[n, cout, ho, ho]], "repeat": repeat})
    return ho


def bottleneck(layers, n, cin, mid, cout, h, stride, repeat=1):
    block = []
    conv_bn(block, n, cin, mid, h, 1, 1)
    ho = conv_bn(block, n, mid, mid, h, 3, stride)
    conv_bn(block, n, mid, cout, ho, 1, 1, relu=False)
    block.append({"op": "add", "inputs": [[n, cout, ho, ho], [n, cout, ho, ho]]})
    block.append({"op": "relu", "inputs": [[n, cout, ho, ho]]})
    if repeat == 1:
        layers += block
    else:
        layers.append({"block": block, "repeat": repeat, "comment": "bottleneck"})
    return ho


def resnet50(n):
    layers = []
    h = conv_bn(layers, n, 3, 64, 224, 7, 2)
    layers.append({"op": "relu", "inputs": [[n, 64, h, h]], "comment": "max pool 3x3/2 (memory-bound pass)"})
    h = 56
    cin = 64
    for mid, cout, blocks, stride in [(64, 256, 3, 1), (128, 512, 4, 2), (256, 1024, 6, 2), (512, 2048, 3, 2)]:
        ho = conv_out(h, 1, stride, 0)
        layers.append({"op": "conv2d", "inputs": [[n, cin, h, h], [cout, cin, 1, 1]],
                       "attrs": {"strides": [stride, stride], "pads": [0, 0]}, "comment": "downsample"})
        layers.append({"op": "batch_norm", "inputs": [[n, cout, ho, ho], [cout], [cout]]})
        h2 = bottleneck(layers, n, cin, mid, cout, h, stride)
        bottleneck(layers, n, cout, mid, cout, h2, 1, repeat=blocks - 1)
        h, cin = h2, cout
    layers.append({"op": "mean", "inputs": [[n, 2048, 7, 7]], "attrs": {"axes": [2, 3]}, "comment": "avg pool"})
    layers.append({"op": "matmul", "inputs": [[n, 2048], [2048, 1000]]})
    layers.append({"op": "softmax_with_cross_entropy", "inputs": [[n, 1000], {"shape": [n], "dtype": "int32"}],
                   "trainable": False})
    return layers


def transformer(batch, seq, hidden, heads, ffn, layers_n, vocab, tp=1, mlm_transform=False):
    t = batch * seq
    hd = hidden // heads
    bh = batch * heads // tp  # attention heads x batch on one tensor-parallel rank (12 heads on 8 ranks: 1.5 each)
    L = []
    L.append({"op": "aten::embedding", "inputs": [[vocab // tp, hidden], {"shape": [batch, seq], "dtype": "int64"}]})
    L.append({"op": "aten::layer_norm", "inputs": [[t, hidden], [hidden], [hidden]]})
    ht = hidden // tp
    block = [
        {"op": "aten::mm", "inputs": [[t, hidden], [hidden, 3 * ht]], "comment": "QKV"},
        {"op": "transpose", "inputs": [[batch, seq, 3 * ht]], "attrs": {"perm": [1, 0, 2]},
         "comment": "Q, K, V to [batch x heads, seq, head dim] (the bytes of the 4-D permute)"},
        {"op": "aten::bmm", "inputs": [[bh, seq, hd], [bh, hd, seq]], "comment": "scores"},
        {"op": "aten::mul", "inputs": [[bh, seq, seq], [1]], "comment": "scale by 1/sqrt(head dim)"},
        {"op": "aten::add", "inputs": [[bh, seq, seq], [1, seq, seq]], "comment": "attention mask"},
        {"op": "aten::softmax", "inputs": [[bh, seq, seq]]},
        {"op": "dropout", "inputs": [[bh, seq, seq], {"shape": [bh, seq, seq], "dtype": "bool"}],
         "comment": "attention-probability dropout"},
        {"op": "aten::bmm", "inputs": [[bh, seq, seq], [bh, seq, hd]], "comment": "context"},
        {"op": "transpose", "inputs": [[seq, batch, ht]], "attrs": {"perm": [1, 0, 2]},
         "comment": "context back to [batch x seq, hidden] (the bytes of the 4-D permute)"},
        {"op": "aten::mm", "inputs": [[t, ht], [ht, hidden]], "comment": "attention out"},
        {"op": "dropout", "inputs": [[t, hidden], {"shape": [t, hidden], "dtype": "bool"}]},
        {"op": "aten::add", "inputs": [[t, hidden], [t, hidden]], "comment": "residual"},
        {"op": "aten::layer_norm", "inputs": [[t, hidden], [hidden], [hidden]]},
        {"op": "aten::mm", "inputs": [[t, hidden], [hidden, ffn // tp]], "comment": "FFN up"},
        {"op": "aten::gelu", "inputs": [[t, ffn // tp]]},
        {"op": "aten::mm", "inputs": [[t, ffn // tp], [ffn // tp, hidden]], "comment": "FFN down"},
        {"op": "dropout", "inputs": [[t, hidden], {"shape": [t, hidden], "dtype": "bool"}]},
        {"op": "aten::add", "inputs": [[t, hidden], [t, hidden]], "comment": "residual"},
        {"op": "aten::layer_norm", "inputs": [[t, hidden], [hidden], [hidden]]},
    ]
    L.append({"block": block, "repeat": layers_n, "comment": "transformer layer"})
    masked = max(1, t * 15 // 100)
    if mlm_transform:  # BERT's MLM head: a dense layer with GELU and a LayerNorm over the masked tokens
        L.append({"op": "aten::mm", "inputs": [[masked, hidden], [hidden, hidden]], "comment": "MLM transform"})
        L.append({"op": "aten::gelu", "inputs": [[masked, hidden]]})
        L.append({"op": "aten::layer_norm", "inputs": [[masked, hidden], [hidden], [hidden]]})
    L.append({"op": "aten::mm", "inputs": [[masked, hidden], [hidden, vocab // tp]], "comment": "MLM head (15% of tokens)"})
    L.append({"op": "softmax_with_cross_entropy", "inputs": [[masked, vocab // tp], {"shape": [masked], "dtype": "int32"}],
              "trainable": False})
    return L


def transformer_params(hidden, ffn, layers_n, vocab):
    return layers_n * (4 * hidden * hidden + 2 * hidden * ffn) + vocab * hidden


def write(name, doc):
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    write("resnet50-train", {
        "name": "resnet50-train",
        "description": "ResNet-50 v1.5 training, batch 256 per device, mixed precision, data parallel (MindSpore benchmark setup)",
        "kind": "train", "dtype": "float16", "steps": 20, "samples_per_step": 256, "unit": "img/s",
        "parallel": {"dp": 8}, "input_bytes_per_sample": 3 * 224 * 224 * 2, "params": 25557032,
        "optimizer": "sgd", "grad_buckets": 4, "layers": resnet50(256)})
    write("bert-large-train", {
        "name": "bert-large-train",
        "description": "BERT-Large pretraining, sequence 128, batch 96 per device, data parallel (MindSpore benchmark setup)",
        "kind": "train", "dtype": "float16", "steps": 10, "samples_per_step": 96, "unit": "seq/s",
        "parallel": {"dp": 8}, "input_bytes_per_sample": 128 * 8 * 3, "params": 340000000,
        # Both published setups (MindSpore's model_zoo BERT, NVIDIA's Paddle BERT) train with LAMB
        # on float32 master weights, a dynamic loss scale (the gradients are unscaled before the
        # update) and gradients clipped to norm 1.0; 65,536 is MindSpore's starting scale (its cost
        # does not depend on the value).
        "optimizer": "lamb", "loss_scale": 65536, "clip_grad_norm": 1.0, "master_weights": True,
        "grad_buckets": 8,
        "layers": transformer(96, 128, 1024, 16, 4096, 24, 21128, mlm_transform=True)})
    # NVIDIA's DeepLearningExamples recipe for the same model (PaddlePaddle BERT, DGX A100 80GB,
    # AMP, phase 1: scripts/configs/pretrain_config.sh): 256 sequences per GPU, 32 accumulated (a
    # 64 K global batch on 8 GPUs), so the gradient allreduce and the LAMB update come once per
    # 8,192 sequences per GPU.
    write("bert-large-train-ngc", {
        "name": "bert-large-train-ngc",
        "description": "BERT-Large pretraining phase 1 as NVIDIA's Paddle recipe: sequence 128, 32 accumulated micro-batches of 256 per device, LAMB, data parallel",
        "kind": "train", "dtype": "float16", "steps": 4, "samples_per_step": 256, "unit": "seq/s",
        "parallel": {"dp": 8, "accumulate_steps": 32}, "input_bytes_per_sample": 128 * 8 * 3, "params": 340000000,
        "optimizer": "lamb", "loss_scale": 65536, "clip_grad_norm": 1.0, "master_weights": True,
        "grad_buckets": 8,
        "layers": transformer(256, 128, 1024, 16, 4096, 24, 30522, mlm_transform=True)})
    tp = 2
    write("ernie3-train", {
        "name": "ernie3-train",
        "description": "ERNIE-3.0 (24 layers, hidden 1024, 16 heads) pretraining, sequence 512, dp 4 x tp 2 over 8 devices",
        "kind": "train", "dtype": "float16", "steps": 20, "samples_per_step": 64, "unit": "seq/s",
        "parallel": {"dp": 4, "tp": tp}, "input_bytes_per_sample": 512 * 8 * 3,
        "params": transformer_params(1024, 4096, 24, 40000), "optimizer": "adam", "grad_buckets": 8,
        "tp_allreduce_bytes": 4 * 24 * 64 * 512 * 1024 * 2, "loader_ms": 5,
        "layers": transformer(64, 512, 1024, 16, 4096, 24, 40000, tp=tp)})
    # The seed's experiment (docs/validation.md): PaddleNLP's ernie-3.0-medium-zh (6 layers, hidden
    # 768, 12 heads, FFN 3072, vocab 40000) pretrained with fleet hybrid parallel mp_degree 8,
    # dp_degree 1, AdamW; dygraph (no graph fusion), Paddle's NPU allocator (no caching: every
    # allocation calls the runtime), the tensor-parallel allreduces waited for where they are issued
    # (no compute overlap: Paddle leaves it off). The batch was set once so 8x910B2 lands at the
    # seed's 2.1 s/step: SEED_ACCUMULATE micro-batches of SEED_BATCH sequences (gradient
    # accumulation, Paddle's accumulate_steps: a micro-batch must fit in 64 GB); nothing else was tuned.
    seed_batch, seed_seq, mp = SEED_BATCH, 512, 8
    write("ernie3-medium-seed", {
        "name": "ernie3-medium-seed",
        "description": "the seed's experiment: ERNIE-3.0 medium (6 x 768, 12 heads) pretraining, seq 512, mp_degree 8, dp 1, 7 accumulated micro-batches of 736, Paddle dygraph with its non-caching NPU allocator",
        "kind": "train", "dtype": "float16", "steps": 5, "samples_per_step": seed_batch, "unit": "seq/s",
        "parallel": {"dp": 1, "tp": mp, "accumulate_steps": SEED_ACCUMULATE}, "input_bytes_per_sample": seed_seq * 8 * 3,
        "params": transformer_params(768, 3072, 6, 40000), "optimizer": "adam", "grad_buckets": 1,
        "allocator": "direct", "fusion": False,
        "tp_allreduce_bytes": 4 * 6 * seed_batch * seed_seq * 768 * 2,
        "layers": transformer(seed_batch, seed_seq, 768, 12, 3072, 6, 40000, tp=mp)})


SEED_BATCH, SEED_ACCUMULATE = 736, 7  # 5,152 sequences per step

if __name__ == "__main__":
    main()

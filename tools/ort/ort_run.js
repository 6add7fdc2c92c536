// Runs an ONNX model once with ONNX Runtime's CPU build (npm's onnxruntime-node)
// on inputs read from .npy files and writes every output as .npy: the reference
// side of scripts/check_against_ort.py (issue #44).
//
// usage: NODE_PATH=DIR/node_modules node tools/ort/ort_run.js MODEL.onnx OUTDIR [--threads N] NAME=FILE.npy ...
//
// Each NAME=FILE.npy is split at the last '=' whose left part is one of the
// model's input names (names may hold '=', spaces, quotes, any Unicode). Writes
// OUTDIR/output_<i>.npy for the i-th of session.outputNames and OUTDIR/outputs.json,
// the list of those names in order. The session is ONNX Runtime's default
// (graphOptimizationLevel 'all'), one thread unless --threads says otherwise.
// .npy files: C order, little-endian, the dtypes in DTYPES; shape () allowed.
// Errors: a message on stderr, exit status 1.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// numpy's descr (without byte order) -> ONNX Runtime's tensor type and typed array.
const DTYPES = {
  f4: ['float32', Float32Array], f2: ['float16', Uint16Array], f8: ['float64', Float64Array],
  i1: ['int8', Int8Array], u1: ['uint8', Uint8Array], i2: ['int16', Int16Array], u2: ['uint16', Uint16Array],
  i4: ['int32', Int32Array], u4: ['uint32', Uint32Array], i8: ['int64', BigInt64Array],
  u8: ['uint64', BigUint64Array], b1: ['bool', Uint8Array],
};
const MAGIC = Buffer.from('\x93NUMPY', 'latin1');

function fail(message) {
  throw new Error(message);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) fail(`${file}: not an .npy file`);
  const major = buf[6];
  if (![1, 2, 3].includes(major)) fail(`${file}: .npy version ${major} is not supported`);
  const lenBytes = major === 1 ? 2 : 4;
  const headerLen = lenBytes === 2 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = 8 + lenBytes + headerLen;
  const header = buf.subarray(8 + lenBytes, start).toString(major === 3 ? 'utf8' : 'latin1');
  const descr = /'descr'\s*:\s*'([<>|=])([a-z]\d+)'/.exec(header);
  const order = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) fail(`${file}: malformed .npy header ${JSON.stringify(header)}`);
  if (!(descr[2] in DTYPES)) fail(`${file}: dtype '${descr[1]}${descr[2]}' is not supported`);
  if (descr[1] === '>' && !descr[2].endsWith('1')) fail(`${file}: big-endian data is not supported`);
  if (order[1] === 'True') fail(`${file}: Fortran-order data is not supported`);
  const dims = shape[1].split(',').map((d) => d.trim()).filter((d) => d !== '').map(Number);
  const [type, Array_] = DTYPES[descr[2]];
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = buf.subarray(start);
  if (bytes.length !== count * Array_.BYTES_PER_ELEMENT)
    fail(`${file}: ${bytes.length} bytes of data for shape (${dims}) of ${descr[1]}${descr[2]}`);
  const copy = new Uint8Array(bytes.length); // aligned for the typed array
  copy.set(bytes);
  return new ort.Tensor(type, new Array_(copy.buffer), dims);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(DTYPES).find(([, [type]]) => type === tensor.type);
  if (!entry) fail(`output of type ${tensor.type} cannot be written as .npy`);
  const descr = (entry[0][1] === '1' ? '|' : '<') + entry[0];
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n'; // numpy's 64-byte alignment
  const prefix = Buffer.alloc(10);
  MAGIC.copy(prefix);
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
                                        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

// "NAME=FILE" split at the last '=' whose left part is an input name.
function splitAssignment(arg, names) {
  for (let at = arg.lastIndexOf('='); at > 0; at = arg.lastIndexOf('=', at - 1))
    if (names.includes(arg.slice(0, at))) return [arg.slice(0, at), arg.slice(at + 1)];
  fail(`'${arg}' is not NAME=FILE.npy with NAME one of the inputs ${JSON.stringify(names)}`);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length < 2) fail('usage: node ort_run.js MODEL.onnx OUTDIR [--threads N] NAME=FILE.npy ...');
  const [model, outdir] = argv;
  let threads = 1;
  const assignments = [];
  for (let i = 2; i < argv.length; ++i) {
    if (argv[i] === '--threads' && i + 1 < argv.length) threads = Number(argv[++i]);
    else assignments.push(argv[i]);
  }
  if (!Number.isInteger(threads) || threads < 1) fail(`--threads expects a positive integer`);
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
  });
  const feeds = {};
  for (const arg of assignments) {
    const [name, file] = splitAssignment(arg, session.inputNames);
    feeds[name] = readNpy(file);
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) fail(`no .npy given for the input(s) ${JSON.stringify(missing)}`);
  const results = await session.run(feeds);
  fs.mkdirSync(outdir, { recursive: true });
  session.outputNames.forEach((name, i) => writeNpy(path.join(outdir, `output_${i}.npy`), results[name]));
  fs.writeFileSync(path.join(outdir, 'outputs.json'), JSON.stringify(session.outputNames));
}

main().catch((e) => {
  console.error(`ort_run.js: ${e.message}`);
  process.exit(1);
});

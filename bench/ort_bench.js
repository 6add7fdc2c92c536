// Times an ONNX model with ONNX Runtime's CPU build (npm's onnxruntime-node),
// the way `kestrel bench` does: every input filled with 0.01, untimed warm-up
// runs, then timed runs; prints one line "MODEL  min = ..  max = ..  median = ..".
//
// usage: NODE_PATH=DIR/node_modules node bench/ort_bench.js MODEL.onnx D0,D1,... THREADS LOOPS WARMUP
// (install once, outside the repository: npm install --ignore-scripts onnxruntime-node)
const ort = require('onnxruntime-node');

async function main() {
  const [model, shape, threads, loops, warmup] = process.argv.slice(2);
  const dims = shape.split(',').map(Number);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all', // ONNX Runtime's default
  });
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.01);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, dims) };
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(loops); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2]
                                  : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(`${model}  min = ${times[0].toFixed(2)}  max = ${times[times.length - 1].toFixed(2)}  median = ${median.toFixed(2)}`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });

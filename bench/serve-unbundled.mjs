// Runs the CLI from dist/cli (not the dist/bin bundle), so that profiles name each frame's file.
// Usage: node bench/serve-unbundled.mjs CHECKOUT COMMAND [ARGS…] (bench/service-floor.ts BENCH_PERF).
const [checkout, ...argv] = process.argv.slice(2);
const { main } = await import(`${checkout}/dist/cli/main.js`);
process.exitCode = await main(argv);

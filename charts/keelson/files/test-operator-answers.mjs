// Run by the chart's `helm test` Pod: succeeds once the operator's metrics endpoint answers with
// keelson operator metrics, fails after TIMEOUT_SECONDS.
const url = process.env.OPERATOR_METRICS_URL;
const deadline = Date.now() + Number(process.env.TIMEOUT_SECONDS ?? '60') * 1000;
let last = 'no answer';
for (;;) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const body = await response.text();
    if (response.ok && body.includes('keelson_operator_')) {
      console.log(`the operator answers at ${url}`);
      process.exit(0);
    }
    last = `HTTP ${response.status}${response.ok ? ' without keelson_operator_ metrics' : ''}`;
  } catch (err) {
    last = String(err instanceof Error && err.cause ? err.cause : err);
  }
  if (Date.now() > deadline) {
    console.error(`the operator does not answer at ${url}: ${last}`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
}

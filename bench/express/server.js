// The unsandboxed Express peer of `make bench-http`: one route,
// POST /api/v1/tools/hash/run, doing in plain Node what the bundled `hash`
// tool does in its sandbox for operation digest with algorithm sha256 (the
// SHA-256 of the text's UTF-8 bytes, lower-case hex), answering the same
// tools.run@1 shape as Toolhost's run route:
//
//   {"id":"<32 hex>","tool":"hash","status":"succeeded","result":{"digest":"<64 hex>"}}
//
// The baseline an ordinary handler sets: express.json() and a hash, no
// schema, no quota, no access log, one process. Nothing is cached; the id is
// fresh randomness per answer. The driver (bench/httpbench) checks that its
// answers equal Toolhost's byte for byte but for the id.
//
// Usage: PORT=8082 HOST=127.0.0.1 node server.js. SIGINT or SIGTERM stops it.
'use strict';

const crypto = require('node:crypto');
const express = require('express');

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(express.json({ limit: '1mb' }));

app.post('/api/v1/tools/hash/run', (req, res) => {
  const input = (req.body && req.body.input) || {};
  if (input.operation !== 'digest' || input.algorithm !== 'sha256' || typeof input.text !== 'string') {
    res.status(422).json({ code: 'invalid_input' });
    return;
  }
  const digest = crypto.createHash('sha256').update(input.text, 'utf8').digest('hex');
  res.json({
    id: crypto.randomBytes(16).toString('hex'),
    tool: 'hash',
    status: 'succeeded',
    result: { digest },
  });
});

// A body that is not JSON is a 400, as on the gin peer.
app.use((err, req, res, next) => {
  if (res.headersSent) {
    next(err);
    return;
  }
  res.status(err.status || 500).json({ code: err.status === 400 ? 'invalid_json' : 'error' });
});

const server = app.listen(Number(process.env.PORT || 8082), process.env.HOST || '127.0.0.1', () => {
  console.error(`express peer listening on ${server.address().address}:${server.address().port}`);
});

function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 5000).unref();
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

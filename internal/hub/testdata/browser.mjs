// The hub's browser cases, run by browser_test.go (TestHubInChromium)
// against a real `toolhost serve` on loopback: playwright-core (installed
// by npm ci in internal/hub/ui) driving Debian's Chromium, headless.
//
// Environment: HUB_URL (the server's origin), HUB_TOKEN (a user token),
// HUB_UI (internal/hub/ui, whose node_modules has playwright-core),
// HUB_CHROMIUM (the browser), HUB_PAC (1 when pac_allocator's engine is
// installed), HUB_SCREENSHOTS (a folder for the PNGs, or empty).
//
// Each case prints "ok NAME" or "FAIL NAME: why"; the exit status is 1
// when one failed. No case depends on timing beyond bounded waits.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.env.HUB_UI, 'package.json'));
const { chromium } = require('playwright-core');

const base = process.env.HUB_URL;
const token = process.env.HUB_TOKEN;
const shots = process.env.HUB_SCREENSHOTS || '';
const wait = { timeout: 20000 };
let failed = false;

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const browser = await chromium.launch({
  executablePath: process.env.HUB_CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' });
const page = await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));

async function step(name, fn) {
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (err) {
    failed = true;
    console.log(`FAIL ${name}: ${String(err?.message ?? err).split('\n')[0]}`);
  }
}

// shot writes a screenshot for docs/hub.md (each PNG under 300 KB: the
// hub's first screen only, the tool pages whole).
async function shot(name, fullPage = true) {
  if (shots) await page.screenshot({ path: join(shots, name), fullPage });
}

async function api(path) {
  return page.evaluate(async (p) => {
    const r = await fetch(p);
    return { status: r.status, body: r.status === 200 ? await r.json() : null };
  }, path);
}

let catalog = null;

await step('signin', async () => {
  await page.goto(base + '/');
  await page.waitForURL('**/signin', wait);
  await page.fill('[data-testid=token]', 'th_not-a-token');
  await page.click('[data-testid=signin]');
  await page.waitForSelector('[data-testid=signin-error]', wait);
  await page.fill('[data-testid=token]', token);
  await page.click('[data-testid=signin]');
  await page.waitForSelector('[data-testid=card]', wait);
  assert(new URL(page.url()).pathname === '/', `after sign-in the page is ${page.url()}`);
  const cookies = await context.cookies();
  assert(cookies.some((c) => c.name === 'toolhost_csrf'), 'no toolhost_csrf cookie');
  assert(!(await page.evaluate(() => document.cookie)).includes('ths_'), 'the session cookie is readable by the page');
});

await step('cards', async () => {
  const c = await api('/api/v1/tools/catalog');
  assert(c.status === 200, `catalogue: ${c.status}`);
  catalog = c.body;
  const cards = page.locator('[data-testid=card]');
  const n = await cards.count();
  assert(n === catalog.items.length + catalog.unavailable.length, `${n} cards for ${catalog.items.length} services and ${catalog.unavailable.length} unavailable summaries`);
  for (const d of catalog.items) {
    const pair = await page.locator(`[data-testid=card][data-code="${d.tool_code}"] [data-testid=compat-pair]`).innerText();
    assert(pair === `Backend/API ${d.contract_version} · UI ${d.ui.version}`, `${d.tool_code}: pair ${JSON.stringify(pair)}`);
  }
  assert(await page.locator('[data-testid=card][data-code=hash] [data-testid=open]').count() === 1, 'hash has no Open link');
  const href = await page.locator('[data-testid=card][data-code=hash] [data-testid=docs-link]').getAttribute('href');
  assert(href === '/mkdocs/tools/hash', `hash docs link ${href}`);
  assert(await page.locator('[data-testid=card][data-code=hash] [data-testid=docs-link]').getAttribute('target') === '_blank', 'docs link not in a new tab');
  assert(await page.locator('[data-testid=banner-backend]').count() === 1, 'no backend count in the banner');
  assert(await page.locator('[data-testid=banner-interface]').count() === 1, 'no interface count in the banner');
  await shot('hub.png', false);
});

await step('italian', async () => {
  const localized = catalog.items.filter((d) => d.i18n?.it && (d.i18n.it.name !== d.name || d.i18n.it.description !== d.description));
  assert(localized.length > 0, 'no service has an Italian text that differs from English');
  await page.selectOption('[data-testid=language]', 'it');
  for (const d of localized) {
    const card = page.locator(`[data-testid=card][data-code="${d.tool_code}"]`);
    assert(await card.locator('[data-testid=card-name]').innerText() === d.i18n.it.name, `${d.tool_code}: name not Italian`);
    assert(await card.locator('[data-testid=card-description]').innerText() === d.i18n.it.description, `${d.tool_code}: description not Italian`);
  }
  assert((await page.locator('h1').innerText()) === 'Strumenti', 'the hub title is not Italian');
  const href = await page.locator('[data-testid=card][data-code=hash] [data-testid=docs-link]').getAttribute('href');
  assert(href === '/mkdocs/it/tools/hash', `Italian docs link ${href}`);
  await page.reload();
  await page.waitForSelector('[data-testid=card]', wait);
  assert(await page.locator('[data-testid=language]').inputValue() === 'it', 'the language was not remembered');
  await page.selectOption('[data-testid=language]', 'en');
});

await step('hash', async () => {
  await page.goto(base + '/tools/hash');
  await page.waitForSelector('[data-testid=run]', wait);
  await page.fill('[data-testid=field-text]', 'abc');
  await page.selectOption('[data-testid=field-algorithm]', 'sha256');
  const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/tools/compute'), wait);
  await page.click('[data-testid=run]');
  const body = await (await answer).json();
  await page.waitForSelector('[data-testid=result-digest]', wait);
  const digest = await page.locator('[data-testid=result-digest]').innerText();
  assert(digest === 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', `digest ${digest}`);
  await page.waitForSelector('[data-testid=timings]', wait);
  const metrics = body.results[0].metrics;
  const nulls = Object.keys(metrics).filter((k) => metrics[k] === null);
  assert(nulls.length > 0, 'no phase is null in this answer: nothing to check');
  await page.click('[data-testid=timings-detail] summary');
  for (const [field, v] of Object.entries(metrics)) {
    const cell = page.locator(`[data-testid=metric][data-field=${field}] td`);
    const text = await cell.innerText();
    if (v === null) assert(text === 'No data available', `${field} is null and shows ${JSON.stringify(text)}`);
    else assert(/ ms$/.test(text), `${field} is ${v} and shows ${JSON.stringify(text)}`);
  }
  const order = await page.locator('[data-testid=timings] > table [data-testid=metric]').evaluateAll((rows) => rows.map((r) => r.dataset.field));
  assert(order[0] === 'server_processing_ms' && order[1] === 'total_ms', `timings order ${order}`);
  assert((await page.locator('[data-testid=timings] .caption').innerText()).includes('excluding network time'), 'no caption');
  await shot('tool-hash.png');
});

// One of issue 19's bundled transforms (ident's hex): its card is ready,
// not contract_not_compiled, and localized; its page runs it.
await step('hex', async () => {
  const d = catalog.items.find((x) => x.tool_code === 'hex');
  assert(d, 'hex is not in the catalogue (make wasm)');
  await page.goto(base + '/');
  await page.waitForSelector('[data-testid=card]', wait);
  const card = page.locator('[data-testid=card][data-code=hex]');
  assert(await card.locator('[data-testid=open]').count() === 1, 'hex has no Open link');
  assert(await card.locator('[data-testid=reason]').count() === 0, `hex shows a reason: ${await card.locator('[data-testid=reason]').allInnerTexts()}`);
  assert(d.i18n?.it?.name && d.i18n.it.name !== d.name, 'hex has no Italian name of its own');
  await page.selectOption('[data-testid=language]', 'it');
  const name = await card.locator('[data-testid=card-name]').innerText();
  assert(name === d.i18n.it.name, `hex in Italian is named ${JSON.stringify(name)}`);
  await page.selectOption('[data-testid=language]', 'en');
  await page.goto(base + '/tools/hex');
  await page.waitForSelector('[data-testid=run]', wait);
  await page.selectOption('[data-testid=operation]', 'encode');
  await page.fill('[data-testid=field-text]', 'Hi?');
  await page.selectOption('[data-testid=field-case]', 'upper');
  await page.click('[data-testid=run]');
  await page.waitForSelector('[data-testid=result-text]', wait);
  const out = await page.locator('[data-testid=result-text]').innerText();
  assert(out === '48693F', `hex of Hi? is ${JSON.stringify(out)}`);
});

if (process.env.HUB_PAC === '1') {
  await step('pac-plan', async () => {
    await page.goto(base + '/tools/pac_allocator');
    await page.waitForSelector('[data-testid=run]', wait);
    await page.selectOption('[data-testid=pac-operation]', 'plan');
    await page.click('[data-testid=run]');
    await page.waitForSelector('[data-testid=proof-panel]', { timeout: 60000 });
    const status = await page.locator('[data-testid=pac-status]').innerText();
    assert(status === 'ready', `plan status ${status}`);
    assert(await page.locator('[data-testid=proof-panel] [data-testid=solver]').count() === 1, 'no solver line in the proof panel');
    assert(await page.locator('[data-testid=proof-panel] [data-testid=allocation]').count() === 1, 'no allocation in the proof panel');
    assert(await page.locator('[data-testid=proof-panel] [data-testid=timings]').count() === 1, 'no timings in the proof panel');
    assert(!(await page.locator('[data-testid=orders]').innerText()).includes('•••••'), 'amounts masked without hide amounts');
    await shot('tool-pac_allocator.png');
  });

  await step('pac-masking', async () => {
    await page.goto(base + '/settings/about');
    await page.check('[data-testid=hide-amounts]');
    await page.goto(base + '/tools/pac_allocator');
    await page.waitForSelector('[data-testid=run]', wait);
    await page.selectOption('[data-testid=pac-operation]', 'value');
    await page.click('[data-testid=run]');
    await page.waitForSelector('[data-testid=positions]', { timeout: 60000 });
    const row = await page.locator('[data-testid=positions] tbody tr').first().innerText();
    assert(row.includes('•••••'), `hidden amounts still show: ${row}`);
    assert(row.includes('%'), `the weight (public) is hidden: ${row}`);
    await page.goto(base + '/settings/about');
    await page.uncheck('[data-testid=hide-amounts]');
  });
}

await step('unavailable', async () => {
  await page.goto(base + '/');
  await page.waitForSelector('[data-testid=card]', wait);
  const reason = page.locator('[data-testid=card][data-code=url] [data-testid=reason]');
  assert(await reason.getAttribute('data-reason') === 'tool_unavailable', `url: ${await reason.getAttribute('data-reason')}`);
  assert((await reason.innerText()).includes('unavailable on the server'), 'url: no localized message');
  assert(await page.locator('[data-testid=card][data-code=url] [data-testid=open]').count() === 0, 'url has an Open link');
  // A service the bundle compiles no contract for (the network probes).
  const probe = await page.locator('[data-testid=card][data-code=dns_lookup] [data-testid=reason]').getAttribute('data-reason');
  assert(probe === 'contract_not_compiled', `dns_lookup: ${probe}`);
});

await step('operation-mismatch', async () => {
  const reason = page.locator('[data-testid=card][data-code=case] [data-testid=reason]');
  assert(await reason.getAttribute('data-reason') === 'operation_mismatch', `case: ${await reason.getAttribute('data-reason')}`);
  assert(await page.locator('[data-testid=card][data-code=case] [data-testid=open]').count() === 0, 'case has an Open link');
  await page.goto(base + '/tools/case');
  await page.waitForSelector('[data-testid=reason]', wait);
  assert(await page.locator('[data-testid=reason]').getAttribute('data-reason') === 'operation_mismatch', 'the tool page does not say operation_mismatch');
  assert(await page.locator('[data-testid=run]').count() === 0, 'the tool page mounted a renderer');
  await page.goto(base + '/tools/no_such_tool');
  await page.waitForSelector('[data-testid=reason]', wait);
  assert(await page.locator('[data-testid=reason]').getAttribute('data-reason') === 'tool_not_installed', 'a stale URL is not tool_not_installed');
});

await step('diagnostics', async () => {
  await page.goto(base + '/settings/about');
  await page.waitForSelector('[data-testid=diag-service]', wait);
  const v = await page.locator('[data-testid=diag-service][data-code=hash] [data-testid=diag-version]').innerText();
  assert(v === 'Version: 1.0.0', `hash: ${v}`);
  const mismatch = await page.locator('[data-testid=diag-service][data-code=case] [data-testid=reason]').getAttribute('data-reason');
  assert(mismatch === 'operation_mismatch', `case in diagnostics: ${mismatch}`);
  const failures = await page.locator('[data-testid=diag-failure]').allInnerTexts();
  assert(failures.some((f) => f.includes('mismatch.wasm') && f.includes('duplicate_code')), `failures: ${JSON.stringify(failures)}`);
});

await step('signout', async () => {
  await page.click('[data-testid=signout]');
  await page.waitForURL('**/signin', wait);
  const c = await api('/api/v1/tools/catalog');
  assert(c.status === 401, `catalogue after sign-out: ${c.status}`);
});

await step('signin-throttled', async () => {
  // Refused tokens from one address trip the credential-burst rule (five
  // within a minute, the first step's included): sign-in is then 429 for
  // the rest of the minute, a valid token's too, and the page says so.
  const post = (t) => page.evaluate(async (t) => (await fetch('/api/v1/auth/session', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: t }),
  })).status, t);
  const statuses = [];
  for (let i = 0; i < 6 && statuses.at(-1) !== 429; i++) statuses.push(await post('th_not-a-token'));
  assert(statuses.at(-1) === 429 && statuses.slice(0, -1).every((s) => s === 401), `bad sign-ins: ${statuses}`);
  await page.goto(base + '/signin');
  await page.fill('[data-testid=token]', 'th_not-a-token');
  await page.click('[data-testid=signin]');
  await page.waitForSelector('[data-testid=signin-error][data-reason=throttled]', wait);
  assert(await post(token) === 429, 'a valid token signed in past the burst');
});

await step('no-page-errors', async () => {
  assert(pageErrors.length === 0, pageErrors.join('; '));
});

await browser.close();
process.exit(failed ? 1 : 0);

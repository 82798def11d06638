// Opens the history's trend page (callgrind-lua history report) in
// headless Chromium (puppeteer-core) and reports what it sees as JSON on
// stdout: console errors and network requests, each chart's series and
// the commits of its marked points (up and down), then, after a real
// click on the marked point of plan.series at plan.commit, the detail
// shown: the commit, the step, the rows of the moved series.
// usage: node trend_check.js TREND.html PLAN.json SHOT.png
const puppeteer = require('puppeteer-core');
const fs = require('fs');
const path = require('path');

(async () => {
  const [trend, planFile, shot] = process.argv.slice(2);
  const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const out = { errors: [], requests: [], charts: [] };
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    page.on('console', m => { if (m.type() === 'error') out.errors.push(m.text()); });
    page.on('pageerror', e => out.errors.push(String(e)));
    await page.setRequestInterception(true);
    const url = 'file://' + path.resolve(trend);
    page.on('request', r => {
      if (r.url() !== url && !r.url().startsWith('data:')) out.requests.push(r.url());
      r.continue();
    });
    await page.goto(url, { waitUntil: 'load' });
    // the charts as drawn: an svg each, its points, the marked ones
    out.charts = await page.$$eval('#charts .chart', divs => divs.map(d => ({
      series: d.dataset.series,
      svg: d.querySelectorAll('svg').length,
      points: d.querySelectorAll('svg circle').length,
      up: Array.from(d.querySelectorAll('svg circle.up')).map(c => c.dataset.commit),
      down: Array.from(d.querySelectorAll('svg circle.down')).map(c => c.dataset.commit),
    })));
    out.count = await page.$eval('#count', e => e.textContent);
    // click the marked point: found by what the page drew, clicked as a user would
    const handles = await page.$$('#charts .chart');
    let dot = null;
    for (const h of handles) {
      if (await h.evaluate(d => d.dataset.series) !== plan.series) continue;
      for (const c of await h.$$('svg circle.up, svg circle.down')) {
        if (await c.evaluate(e => e.dataset.commit) === plan.commit) dot = c;
      }
    }
    if (!dot) throw new Error('no marked point of ' + plan.series + ' at ' + plan.commit);
    await dot.scrollIntoView();
    await dot.click();
    out.detail = await page.evaluate(() => {
      const text = id => { const e = document.getElementById(id); return e ? e.textContent : null; };
      const moved = document.getElementById('moved');
      return { commit: text('dcommit'), value: text('dvalue'), step: text('dstep'),
        selected: Array.from(document.querySelectorAll('svg circle.sel')).map(c => c.dataset.commit),
        moved: moved ? Array.from(moved.querySelectorAll('tr')).slice(1).map(tr =>
          Array.from(tr.children).map(td => td.textContent)) : [] };
    });
    await page.screenshot({ path: shot });
  } catch (e) {
    out.errors.push('check: ' + (e && e.stack || e));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
})();

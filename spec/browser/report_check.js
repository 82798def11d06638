// Opens a callgrind HTML report in headless Chromium or Firefox
// (puppeteer-core) and
// reports what it sees as JSON on stdout: console errors, network requests,
// the table after sorting and filtering, the detail of a clicked function,
// the flame graph's zoom, the diff's tables; takes a screenshot.
// usage: node report_check.js REPORT.html PLAN.json SHOT.png
const puppeteer = require('puppeteer-core');
const fs = require('fs');
const path = require('path');

(async () => {
  const [report, planFile, shot] = process.argv.slice(2);
  const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  // FIREFOX=/usr/bin/firefox-esr: Firefox (WebDriver BiDi) in place of Chromium
  const browser = await puppeteer.launch(process.env.FIREFOX
    ? { browser: 'firefox', executablePath: process.env.FIREFOX, headless: true }
    : {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  const out = { errors: [], requests: [] };
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: plan.width || 1400, height: 900 });
    page.on('console', m => { if (m.type() === 'error') out.errors.push(m.text()); });
    page.on('pageerror', e => out.errors.push(String(e)));
    await page.setRequestInterception(true);
    const url = 'file://' + path.resolve(report);
    page.on('request', r => {
      if (r.url() !== url && !r.url().startsWith('data:')) out.requests.push(r.url());
      r.continue();
    });
    await page.goto(url, { waitUntil: 'load' });
    // the call-graph view as it opens: on which function, and is that node
    // in the middle of its scrolled box
    const graphOf = () => page.evaluate(() => {
      const node = g => [g.dataset.name, g.dataset.incl].concat(g.dataset.cost ? [g.dataset.cost] : []);
      const self = document.getElementById('cgself'), wrap = document.getElementById('cgwrap');
      const a = self.getBoundingClientRect(), b = wrap.getBoundingClientRect();
      return { self: node(self), callers: Array.from(document.querySelectorAll('#cgraph g.cgcaller')).map(node),
        callees: Array.from(document.querySelectorAll('#cgraph g.cgcallee')).map(node),
        offcentre: Math.round(Math.abs((a.top + a.bottom) / 2 - (b.top + b.bottom) / 2)),
        scrolled: wrap.scrollTop, more: Array.from(document.querySelectorAll('#cgraph text'))
          .map(t => t.textContent).filter(t => / more$/.test(t)) };
    });
    // names only (a report of hostile names): every row's and frame's
    // text as code points (so that the checker's output stays plain
    // JSON), whether each row's characters are drawn left to right (no
    // bidirectional control reordered them), and the text of the page
    if (plan.names_only) {
      out.names = await page.evaluate(() => {
        const cps = s => Array.from(s).map(c => c.codePointAt(0));
        const ltr = td => {
          const t = td.firstChild, xs = [];
          if (!t) return true;
          for (let i = 0; i < t.length; i++) {
            const r = document.createRange();
            r.setStart(t, i); r.setEnd(t, i + 1);
            const b = r.getBoundingClientRect();
            if (b.width > 0) xs.push(b.left);
          }
          return xs.every((x, i) => i === 0 || x >= xs[i - 1]);
        };
        const tds = Array.from(document.querySelectorAll('#rows tr td:first-child'));
        return { rows: tds.map(td => cps(td.textContent)), ltr: tds.map(ltr),
          frames: Array.from(document.querySelectorAll('#flame .fr')).map(e => cps(e.textContent)),
          body: cps(document.body.innerText) };
      });
      await page.screenshot({ path: shot });
      throw 'opened';
    }
    out.opened = await graphOf();
    if (plan.only_open) { await page.screenshot({ path: shot }); throw 'opened'; }
    // a probe of the page as it opens (plan.probe): whether the table fits
    // the window, where it starts, the long names' cells, the flame frames'
    // colours; then (plan.select) a function's source lines and which of
    // its callers the call-graph box shows without scrolling
    if (plan.probe) {
      out.layout = await page.evaluate(() => {
        const wrap = document.getElementById('tablewrap'), r = wrap.getBoundingClientRect();
        const ths = Array.from(wrap.querySelectorAll('th'));
        const top = id => Math.round(document.getElementById(id).getBoundingClientRect().top + window.scrollY);
        return { page: document.documentElement.scrollWidth, window: window.innerWidth,
          table: wrap.scrollWidth, box: wrap.clientWidth,
          offscreen: ths.filter(th => { const x = th.getBoundingClientRect().right; return x > r.right + 1 || x > window.innerWidth; })
            .map(th => th.textContent),
          top: top('tablewrap'), flametop: top('flame'),
          // each row's name cell: its text's length, its title's, whether shortened in the middle
          names: Array.from(document.querySelectorAll('#rows tr td:first-child')).map(td =>
            [td.textContent.length, td.title.length, td.textContent.indexOf('\u2026') > 0]) };
      });
      out.frames = await page.$$eval('#flame .fr', els => els.filter(e => e.dataset.k !== '0')
        .map(e => [e.title.split(' ')[0], e.style.backgroundColor, e.title.replace(/^.* /, '')]));
      if (plan.select) {
        await page.evaluate(name => window.CG.select(window.CG.data.profile.fns.findIndex(f => f.n === name)), plan.select);
        out.selected = await page.evaluate(() => {
          const cps = s => Array.from(s).map(c => c.codePointAt(0));
          const wrap = document.getElementById('cgwrap'), b = wrap.getBoundingClientRect();
          const nol = document.getElementById('nolines');
          return { name: document.getElementById('dname').title,
            lines: Array.from(document.querySelectorAll('#lines tr')).slice(1).map(tr =>
              [tr.children[0].textContent, tr.children[1].textContent, cps(tr.children[2].textContent)]),
            nolines: nol ? nol.textContent : '',
            visible: Array.from(document.querySelectorAll('#cgraph g.cgcaller')).filter(g => {
              const a = g.getBoundingClientRect(); return a.top >= b.top - 1 && a.bottom <= b.bottom + 1; })
              .map(g => g.dataset.name) };
        });
      }
      await page.screenshot({ path: shot });
      throw 'opened';
    }
    const names = () => page.$$eval('#rows tr td:first-child', tds => tds.map(td => td.textContent));
    out.initial = await names();
    // sort by self (descending on the first click)
    await page.click('th[data-k="s"]');
    out.by_self = await names();
    // another event, then sort by inclusive
    if (plan.event_index !== undefined) {
      await page.select('#event', String(plan.event_index));
      await page.click('th[data-k="i"]');
      out.by_incl_event = await names();
      await page.select('#event', '0');
    }
    // filter
    await page.type('#filter', plan.filter);
    out.filtered = await names();
    await page.$eval('#filter', el => { el.value = ''; el.dispatchEvent(new Event('input')); });
    // click a function
    await page.$$eval('#rows tr', (trs, name) => {
      const tr = trs.find(t => t.firstChild.textContent === name); tr.click();
    }, plan.select);
    const rowsOf = sel => page.$$eval(sel + ' tr', trs => trs.slice(1).map(tr =>
      Array.from(tr.children).map(td => td.textContent)));
    out.graph = await graphOf();
    out.detail = {
      name: await page.$eval('#dname', e => e.textContent),
      self: await page.$eval('#dself', e => e.textContent),
      incl: await page.$eval('#dincl', e => e.textContent),
      callers: await rowsOf('#callers'),
      callees: await rowsOf('#callees'),
      lines: await page.$$eval('#lines tr', trs => trs.slice(1).map(tr =>
        Array.from(tr.children).map(td => td.textContent))),
    };
    // the flame graph: click the frame of a function, it zooms
    out.flamenote = await page.$eval('#flamenote', e => e.textContent);
    const before = await page.$$eval('#flame .fr', els => els.length);
    await page.$$eval('#flame .fr', (els, name) => {
      const el = els.find(e => e.dataset.k !== '0' && e.textContent === name); el.click();
    }, plan.zoom);
    out.flame = {
      frames_before: before,
      zoom: await page.$eval('#flame', e => e.dataset.zoom),
      all: await page.$eval('#flameall', e => e.textContent),
      widest: await page.$$eval('#flame .fr', els => els.filter(e => e.dataset.k !== '0')
        .map(e => [e.textContent, parseFloat(e.style.width)]).sort((a, b) => b[1] - a[1])[0]),
      width: await page.$eval('#flame', e => e.clientWidth),
    };
    await page.click('#flameall');
    out.flame.unzoom = await page.$eval('#flame', e => e.dataset.zoom);
    if (await page.$('#movers')) {
      out.diff = { totals: await rowsOf('#difftotals'), movers: await rowsOf('#movers'),
        matched: await rowsOf('#matched') };
    }
    await page.screenshot({ path: shot, fullPage: false });
  } catch (e) {
    if (e !== 'opened') out.errors.push('check: ' + (e && e.stack || e));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
})();

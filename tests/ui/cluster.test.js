// Zest's web UI: the cluster page's figures (/operate/api/figures, polled every 5 s) drawn as
// sparklines while instances start and complete. Any console error fails the test; it leaves a
// screenshot in target/ui-screenshots/.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { activateJob, deploy, model, rest, setup, startInstance } from './harness.js'

const ctx = setup()
const { withPage } = ctx

/** The latest value a sparkline shows (its figure's number), or null while it collects. */
async function latest(page, label) {
  const figure = page.locator('figure.spark').filter({ has: page.getByText(label, { exact: true }) })
  const value = await figure.locator('.spark-now').getAttribute('data-value')
  return value === '' ? null : Number(value)
}

test('the cluster page charts instances per second as they start and complete', { timeout: 90_000 }, async () => {
  const m = model()
  await deploy(ctx.server, m)
  await withPage('cluster-figures', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/cluster`)
    await page.getByText('1 node, 1 partition').waitFor()
    await page.getByRole('heading', { name: 'Figures of node 0' }).waitFor()
    // a rate needs two polls: until then the charts say they collect
    await page.getByRole('img', { name: 'Instances started per second: collecting' }).waitFor()

    // instances start (and some complete) for two polls' time, or until the chart moves
    const deadline = Date.now() + 30_000
    let started = 0
    while (Date.now() < deadline && !(await latest(page, 'Instances completed per second') > 0)) {
      await Promise.all(Array.from({ length: 4 }, () => startInstance(ctx.server, m)))
      started += 4
      const job = await activateJob(ctx.server, m)
      await rest(ctx.server, 'POST', `/jobs/${job.jobKey}/completion`, {})
      await page.waitForTimeout(250)
    }
    assert.ok(await latest(page, 'Instances started per second') > 0, 'instances started per second')
    assert.ok(await latest(page, 'Instances completed per second') > 0, 'instances completed per second')
    await page.getByRole('img', { name: /^Instances started per second: now [\d.]+\/s, highest/ }).waitFor()
    // the chart draws the series
    const line = page.locator('figure.spark', { hasText: 'Instances started per second' }).locator('polyline, circle')
    assert.ok(await line.count() > 0, 'a line is drawn')

    // the partition's counters since the node started
    const row = page.getByRole('row', { name: /^1 leader, healthy/ })
    const cell = (label) => row.locator(`td[data-label="${label}"]`)
    await page.waitForFunction((n) => {
      const td = document.querySelector('td[data-label="Instances started"]')
      return td && Number(td.textContent.replace(/\D/g, '')) >= n
    }, started - 4)
    assert.ok(Number((await cell('Completed').textContent()).replace(/\D/g, '')) > 0)
    assert.ok(Number((await cell('Commands received').textContent()).replace(/\D/g, '')) > started)
    assert.ok(await latest(page, 'Resident memory') > 0, 'resident memory')

    // the memory budget's parts open from the keyboard
    await page.getByText('Memory budget by part').focus()
    await page.keyboard.press('Enter')
    await page.getByRole('cell', { name: 'block cache' }).waitFor()
  })
})

test('the cluster page fits a narrow screen', { timeout: 60_000 }, async () => {
  await withPage('narrow-cluster', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/cluster`)
    await page.getByRole('heading', { name: 'Figures of node 0' }).waitFor()
    await page.getByRole('img', { name: /^Resident memory: now/ }).waitFor()
    const overflow = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth)
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`)
  }, { width: 360, height: 800 })
})

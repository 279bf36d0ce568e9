// Zest's web UI with authentication on (--auth basic): the login page takes the place of every
// page until a user logs in; wrong credentials are said on the page; the session cookie carries
// the UI's calls (changes included, with the X-Requested-With header the UI sends), survives a
// reload, and ends with "Log out". A screenshot of each step is left in target/ui-screenshots/.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { acquireServer, deploy, launch, model, pageTest } from './harness.js'

const ctx = {}
before(async () => {
  ctx.server = await acquireServer({ args: ['--auth', 'basic', '--admin-user', 'demo:demo-pass'] })
  ctx.server.credentials = 'demo:demo-pass'
  ctx.browser = await launch()
})
after(async () => {
  await ctx.browser?.close()
  await ctx.server?.stop()
})

// the browser reports each 401 answer (the first "who am I", the wrong password) as a console error
const UNAUTHORIZED = /status of 401/

test('a user logs in, works with a session, and logs out', { timeout: 90_000 }, async () => {
  if (process.env.ZEEBE_ADDRESS) return // an external server has its own authentication
  const m = model()
  await deploy(ctx.server, m)
  await pageTest(ctx.browser, 'login', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/definitions`)
    await page.getByRole('heading', { name: 'Log in to Zest' }).waitFor()
    // no page content before a login
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 0)

    await page.getByLabel('Username').fill('demo')
    await page.getByLabel('Password').fill('wrong')
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.getByRole('alert').getByText('Wrong username or password').waitFor()

    await page.getByLabel('Password').fill('demo-pass')
    await page.getByRole('button', { name: 'Log in' }).click()
    // the page asked for comes, with the user in the header
    await page.getByRole('heading', { name: 'Processes' }).waitFor()
    await page.getByRole('row').filter({ hasText: m.id }).getByRole('link', { name: 'Check the order' }).waitFor()
    await page.getByText('demo', { exact: true }).waitFor()
    const cookies = await page.context().cookies()
    const session = cookies.find((c) => c.name === 'zest_session')
    assert.ok(session?.httpOnly, 'an HttpOnly session cookie')

    // a change with the session: start an instance from the definition's page
    await page.getByRole('row').filter({ hasText: m.id }).getByRole('link', { name: 'Check the order' }).click()
    await page.getByRole('button', { name: 'Start an instance' }).click()
    await page.getByLabel('Variables (a JSON object)').fill('{"order": 7}')
    await page.getByRole('button', { name: 'Start', exact: true }).click()
    await page.waitForURL(/\/operate\/processes\/\d+$/)
    await page.getByRole('row').filter({ hasText: 'order' }).getByText('7').waitFor()

    // a reload keeps the session
    await page.reload()
    await page.getByRole('row').filter({ hasText: 'order' }).getByText('7').waitFor()
    assert.equal(await page.getByRole('heading', { name: 'Log in to Zest' }).count(), 0)

    await page.getByRole('button', { name: 'Log out' }).click()
    await page.getByRole('heading', { name: 'Log in to Zest' }).waitFor()
    await page.reload()
    await page.getByRole('heading', { name: 'Log in to Zest' }).waitFor()
  }, undefined, UNAUTHORIZED)
})

// Zest's web UI as a person uses it, in a real Chromium: deploy by drag and drop (a process, a
// decision), see a decision's table, start an instance, see its token on the diagram, edit and
// add its variables, filter instances by clicking an element, open an incident and retry it,
// cancel instances in bulk, complete a user task through its form, see the API's errors. Any console error fails the test;
// each test leaves a screenshot in target/ui-screenshots/.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  activateJob, deploy, failJob, model, rest, screenshot, setup, startInstance,
} from './harness.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const ctx = setup()
const { withPage } = ctx

/** Drops `files` ({xml, name}) on the Processes page's drop zone, as a person drags them there. */
async function drop(page, files) {
  const dt = await page.evaluateHandle((list) => {
    const d = new DataTransfer()
    for (const f of list) d.items.add(new File([f.xml], f.name, { type: 'application/xml' }))
    return d
  }, files.map(({ xml, name }) => ({ xml, name })))
  await page.dispatchEvent('[data-testid=dropzone]', 'dragover', { dataTransfer: dt })
  await page.dispatchEvent('[data-testid=dropzone]', 'drop', { dataTransfer: dt })
}

test('deploys a model dropped on the Processes page', { timeout: 60_000 }, async () => {
  const m = model()
  await withPage('deploy-by-drop', async (page) => {
    await page.goto(`${ctx.server.rest}/`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Processes' }).click()
    await page.waitForURL('**/operate/definitions')
    await drop(page, [m])
    const notice = page.getByRole('status')
    await notice.getByText('Deployed').waitFor()
    await notice.getByRole('link', { name: m.id }).waitFor()
    // the list shows the new process, and its page shows the diagram
    await page.getByRole('link', { name: 'Check the order' }).first().waitFor()
    await screenshot(page, 'deploy-by-drop-list')
    await notice.getByRole('link', { name: m.id }).click()
    await page.locator('.diagram[data-ready=true]').waitFor()
    await page.locator('[data-element-id=check]').first().waitFor()
    // start an instance of it from its page, with variables
    await page.getByRole('button', { name: 'Start an instance' }).click()
    await page.getByLabel('Variables (a JSON object)').fill('{"order": 7}')
    await page.getByRole('button', { name: 'Start', exact: true }).click()
    await page.waitForURL(/\/operate\/processes\/\d+$/)
    await page.locator('.djs-element.has-token[data-element-id=check]').waitFor()
    await page.getByRole('row').filter({ hasText: 'order' }).getByText('7').waitFor()
  })
})

test('deploys a dropped decision and shows its table and evaluations', { timeout: 60_000 }, async () => {
  const dmn = readFileSync(join(ROOT, 'examples', 'discount.dmn'), 'utf8')
  await withPage('decision-table', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/definitions`)
    await drop(page, [{ xml: dmn, name: 'discount.dmn' }])
    const notice = page.getByRole('status')
    await notice.getByRole('link', { name: 'discount' }).waitFor()
    await rest(ctx.server, 'POST', '/decision-definitions/evaluation', {
      decisionDefinitionId: 'discount', variables: { customer: 'gold', amount: 120 },
    })
    await notice.getByRole('link', { name: 'discount' }).click()
    await page.locator('.dmn[data-view=decisionTable]').waitFor()
    await page.locator('.dmn').getByText('Hit policy:').waitFor()
    const evaluation = page.getByRole('row').filter({ hasText: 'Evaluated' })
    await evaluation.getByText('0.2').waitFor()
  })
})

test('shows a running instance\'s token on its diagram and filters by an element', { timeout: 60_000 }, async () => {
  const m = model()
  const deployed = await deploy(ctx.server, m)
  const definitionKey = deployed.deployments[0].processDefinition.processDefinitionKey
  const key = await startInstance(ctx.server, m, { order: 42, customer: 'Ada' })
  await withPage('instance-token', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/${key}`)
    await page.locator('.diagram[data-ready=true]').waitFor()
    // the token waits at the service task; the flow to it was taken
    await page.locator('.djs-element.has-token[data-element-id=check]').waitFor()
    await page.locator('.djs-connection.taken[data-element-id=to_check]').waitFor({ state: 'attached' })
    assert.equal(await page.locator('.djs-connection.taken[data-element-id=to_end]').count(), 0)
    assert.equal(await page.locator('.stat-active').first().textContent(), '1')
    await page.getByText('Active', { exact: true }).first().waitFor()
    // its variables
    const customer = page.getByRole('row').filter({ hasText: 'customer' })
    await customer.getByText('"Ada"').waitFor()
    // edit one, add another
    await page.getByRole('button', { name: 'Edit customer' }).click()
    await page.getByLabel('Value of customer').fill('"Grace"')
    await page.getByRole('button', { name: 'Save' }).click()
    await customer.getByText('"Grace"').waitFor()
    await page.getByLabel('Name', { exact: true }).fill('note')
    await page.getByLabel('Value (JSON)').fill('{"urgent": true}')
    await page.getByRole('button', { name: 'Add variable' }).click()
    await page.getByRole('row').filter({ hasText: 'note' }).getByText('{"urgent":true}').waitFor()
    const vars = await rest(ctx.server, 'POST', '/variables/search', { filter: { processInstanceKey: key } })
    const byName = Object.fromEntries(vars.items.map((v) => [v.name, JSON.parse(v.value)]))
    assert.deepEqual(byName, { customer: 'Grace', order: 42, note: { urgent: true } })
    await screenshot(page, 'instance-variables')
    // its element instances: the start event done, the task active
    const tree = page.getByRole('tree', { name: 'Element instances' })
    await tree.getByRole('treeitem').filter({ hasText: 'Order in' }).getByText('Completed').waitFor()
    await tree.getByRole('treeitem').filter({ hasText: 'Check' }).getByText('Active').waitFor()
    // a worker completes the job: the page follows without a reload
    const job = await activateJob(ctx.server, m)
    await rest(ctx.server, 'POST', `/jobs/${job.jobKey}/completion`, { variables: { checked: true } })
    await page.locator('.summary').getByText('Completed').waitFor({ timeout: 15_000 })
    await page.locator('.djs-connection.taken[data-element-id=to_end]').waitFor({ state: 'attached' })
    await page.getByRole('row').filter({ hasText: 'checked' }).waitFor()
  })
  await withPage('instances-sorted', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes`)
    await page.getByLabel('Process id').fill(m.id)
    await page.getByLabel('State').selectOption('COMPLETED')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/process=/)
    await page.getByRole('link', { name: key }).waitFor()
    assert.equal(await page.locator('tbody tr').count(), 1)
    await screenshot(page, 'instances-filtered')
    // by a variable's value (typed as text or as JSON), then by when it started
    await page.getByLabel('Variable name').fill('customer')
    await page.getByLabel('Variable value').fill('Grace')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/value=Grace/)
    await page.getByRole('link', { name: key }).waitFor()
    await page.getByLabel('Variable value').fill('"Ada"')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/value=%22Ada%22/)
    await page.getByText('No instance matches.').waitFor()
    await page.getByLabel('Variable value').fill('')
    await page.getByLabel('Started before').fill('2000-01-01T00:00')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/startedBefore=/)
    await page.getByText('No instance matches.').waitFor()
    await page.getByLabel('Started before').fill('')
    await page.getByLabel('Started after').fill('2000-01-01T00:00')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/startedAfter=/)
    await page.getByRole('link', { name: key }).waitFor()
    await screenshot(page, 'instances-filtered-by-variable-and-date')
    // sorted by key, one way then the other
    await page.getByRole('button', { name: 'Instance' }).click()
    await page.locator('th[aria-sort=ascending]').getByText('Instance').waitFor()
    await page.getByRole('link', { name: key }).waitFor()
  })
  await withPage('definition-element-filter', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/definitions/${definitionKey}`)
    await page.locator('.diagram[data-ready=true]').waitFor()
    await page.locator('.djs-element[data-element-id=check]').first().click()
    await page.waitForURL(/element=check/)
    await page.getByRole('heading', { name: /Instances at check/ }).waitFor()
    await page.getByRole('link', { name: key }).waitFor()
  })
})

test('opens a sub-process in the element instance tree', { timeout: 60_000 }, async () => {
  const m = model('ui_sub.bpmn')
  await deploy(ctx.server, m)
  const key = await startInstance(ctx.server, m)
  await withPage('element-tree', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/${key}`)
    const tree = page.getByRole('tree', { name: 'Element instances' })
    await tree.getByRole('button', { name: 'Open Inner' }).click()
    await tree.getByRole('treeitem', { name: /^Inner task/ }).getByText('Active').waitFor()
  })
})

test('opens an incident from the list and retries it', { timeout: 60_000 }, async () => {
  const m = model()
  await deploy(ctx.server, m)
  const key = await startInstance(ctx.server, m)
  const message = `no stock for ${m.id}`
  await failJob(ctx.server, m, message)
  await withPage('incident-retry', async (page) => {
    // the dashboard counts it by its message, which leads to the incidents list
    await page.goto(`${ctx.server.rest}/operate`)
    await page.getByRole('link', { name: message }).click()
    await page.waitForURL(/\/operate\/incidents\?errorMessage=/)
    const row = page.getByRole('row').filter({ hasText: message })
    await row.getByRole('link', { name: key }).click()
    await page.waitForURL(`**/operate/processes/${key}`)
    await page.locator('.djs-element.has-incident[data-element-id=check]').waitFor()
    await page.getByText(message).waitFor()
    await screenshot(page, 'incident-open')
    await page.getByRole('button', { name: 'Retry' }).click()
    await page.getByText('No open incident.').waitFor()
    await page.locator('.djs-element.has-token[data-element-id=check]').waitFor()
  })
  // the job got a retry: a worker can take it again
  const job = await activateJob(ctx.server, m)
  assert.equal(String(job.processInstanceKey), key)
  assert.equal(job.retries, 1)
  const inst = await rest(ctx.server, 'GET', `/process-instances/${key}`)
  assert.equal(inst.hasIncident, false)
})

test('cancels every instance of a filter in bulk and follows the batch', { timeout: 60_000 }, async () => {
  const m = model()
  await deploy(ctx.server, m)
  const keys = []
  for (let i = 0; i < 3; i++) keys.push(await startInstance(ctx.server, m))
  await withPage('bulk-cancel', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes?process=${m.id}&state=ACTIVE`)
    for (const k of keys) await page.getByRole('link', { name: k }).waitFor()
    await page.getByRole('button', { name: 'Cancel them' }).click()
    await page.getByRole('button', { name: 'Yes, cancel them' }).click()
    const status = page.getByRole('status').filter({ hasText: 'CANCEL_PROCESS_INSTANCE' })
    await status.getByText('COMPLETED').waitFor({ timeout: 20_000 })
    assert.match(await status.textContent(), /3 of 3 done/)
    // the list follows: nothing of this process is active any more
    await page.getByText('No instance matches.').waitFor({ timeout: 15_000 })
  })
  for (const k of keys) {
    const inst = await rest(ctx.server, 'GET', `/process-instances/${k}`)
    assert.equal(inst.state, 'TERMINATED')
  }
})

test('completes a user task through its form', { timeout: 60_000 }, async () => {
  const form = new FormData()
  for (const name of ['review.bpmn', 'review.form']) {
    form.append('resources', new Blob([readFileSync(join(ROOT, 'examples', name))]), name)
  }
  await rest(ctx.server, 'POST', '/deployments', form)
  const created = await rest(ctx.server, 'POST', '/process-instances', { processDefinitionId: 'review', variables: { request: 'a day off' } })
  const key = String(created.processInstanceKey)
  await withPage('task-form', async (page) => {
    await page.goto(`${ctx.server.rest}/operate`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).click()
    const row = page.getByRole('row').filter({ hasText: 'Review' }).first()
    await row.getByRole('link', { name: 'Review the request' }).click()
    await page.getByRole('button', { name: 'Claim' }).click()
    await page.getByLabel('Comment').fill('fine by me')
    await page.getByLabel('Approved').check()
    await screenshot(page, 'task-form-filled')
    await page.getByRole('button', { name: 'Complete' }).click()
    await page.locator('.summary').getByText('Completed').waitFor()
  })
  const vars = await rest(ctx.server, 'POST', '/variables/search', { filter: { processInstanceKey: key } })
  const byName = Object.fromEntries(vars.items.map((v) => [v.name, JSON.parse(v.value)]))
  assert.equal(byName.comment, 'fine by me')
  assert.equal(byName.approved, true)
})

test('shows what the API answered when it refuses', { timeout: 60_000 }, async () => {
  // the browser logs each failed request; those are the point here
  const refused = /Failed to load resource: the server responded with a status of (400|404)/
  await withPage('errors-shown', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/2251799813600000`)
    await page.getByRole('alert').filter({ hasText: '404' }).first().waitFor()
    await page.goto(`${ctx.server.rest}/operate/definitions`)
    await drop(page, [{ xml: '<definitions>not a process</definitions>', name: 'broken.bpmn' }])
    const alert = page.getByRole('alert').filter({ hasText: '400' })
    await alert.waitFor()
    assert.match(await alert.textContent(), /broken\.bpmn/)
  }, undefined, refused)
})

test('the shell works on a narrow screen and by keyboard', { timeout: 60_000 }, async () => {
  await withPage('narrow-dashboard', async (page) => {
    await page.goto(`${ctx.server.rest}/operate`)
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor()
    // the navigation folds into a menu, opened from the keyboard
    await page.getByRole('button', { name: 'Menu' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Incidents', exact: true }).waitFor()
    assert.match(page.url(), /\/operate\/incidents$/)
    await page.getByRole('button', { name: 'Menu' }).click()
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Cluster' }).click()
    await page.getByText('1 node, 1 partition').waitFor()
  }, { width: 390, height: 800 })
})

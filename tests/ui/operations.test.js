// Zest's web UI acting on instances, in a real Chromium: move a token (modification, with its
// summary first), migrate an instance to another version, follow batch operations on their
// page, read a decision instance (inputs, matched rules marked in its table, outputs), and
// walk an instance's page by keyboard. Any console error fails the test; each test leaves a
// screenshot in target/ui-screenshots/.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { deploy, model, rest, screenshot, setup, startInstance } from './harness.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const ctx = setup()
const { withPage } = ctx

/** The flow nodes where the instance has tokens (its active element instances but the
 *  process's own), sorted. */
async function activeElements(key) {
  const res = await rest(ctx.server, 'POST', '/element-instances/search', {
    filter: { processInstanceKey: key, state: 'ACTIVE' },
  })
  return res.items.filter((e) => e.type !== 'PROCESS').map((e) => e.elementId).sort()
}

test('moves a token from one task to another, with a summary first', { timeout: 60_000 }, async () => {
  const m = model('ui_two.bpmn')
  await deploy(ctx.server, m)
  const key = await startInstance(ctx.server, m)
  await withPage('modification-move', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/${key}`)
    await page.locator('.djs-element.has-token[data-element-id=check]').waitFor()
    await page.getByText('Modify the instance').click()
    await page.getByLabel('Operation').selectOption('move')
    await page.getByLabel('From element').selectOption('check')
    await page.getByLabel('To element').selectOption('approve')
    await page.getByRole('button', { name: 'Add to the modification' }).click()
    const summary = page.getByRole('region', { name: 'Modification summary' })
    await summary.getByText('Move the tokens at Check to Approve').waitFor()
    await screenshot(page, 'modification-summary')
    // nothing is applied before the summary is confirmed
    assert.deepEqual(await activeElements(key), ['check'])
    await summary.getByRole('button', { name: 'Apply 1 modification' }).click()
    await page.locator('.djs-element.has-token[data-element-id=approve]').waitFor({ timeout: 15_000 })
    assert.equal(await page.locator('.djs-element.has-token[data-element-id=check]').count(), 0)
  })
  assert.deepEqual(await activeElements(key), ['approve'])
})

test('an invalid modification shows the API\'s problem', { timeout: 60_000 }, async () => {
  const m = model('ui_two.bpmn')
  await deploy(ctx.server, m)
  const key = await startInstance(ctx.server, m)
  await withPage('modification-refused', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/${key}`)
    await page.getByText('Modify the instance').click()
    await page.getByLabel('Operation').selectOption('cancel')
    await page.getByLabel('From element').selectOption('approve')
    await page.getByRole('button', { name: 'Add to the modification' }).click()
    await page.getByRole('button', { name: 'Apply 1 modification' }).click()
    await page.getByRole('alert').filter({ hasText: 'No active token at approve' }).waitFor()
  })
  assert.deepEqual(await activeElements(key), ['check'])
})

test('migrates an instance to another version of its process', { timeout: 60_000 }, async () => {
  const v1 = model('ui_task.bpmn')
  const first = await deploy(ctx.server, v1)
  const v2 = model('ui_two.bpmn', v1.id)
  const second = await deploy(ctx.server, v2)
  const target = second.deployments[0].processDefinition.processDefinitionKey
  assert.notEqual(first.deployments[0].processDefinition.processDefinitionKey, target)
  const key = await rest(ctx.server, 'POST', '/process-instances', {
    processDefinitionKey: first.deployments[0].processDefinition.processDefinitionKey,
  }).then((r) => String(r.processInstanceKey))
  await withPage('migration', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/${key}`)
    await page.locator('.djs-element.has-token[data-element-id=check]').waitFor()
    await page.getByText('Migrate to another version').click()
    await page.getByLabel('Target version').selectOption(String(target))
    // elements map by id, and each mapping can be changed
    assert.equal(await page.getByLabel('Target of check').inputValue(), 'check')
    assert.equal(await page.getByLabel('Target of end').inputValue(), 'end')
    await page.getByLabel('Target of end').selectOption('')
    await screenshot(page, 'migration-mapping')
    await page.getByRole('button', { name: 'Migrate to version 2' }).click()
    await page.locator('.summary').getByText('version 2').waitFor({ timeout: 15_000 })
    // the diagram is the new version's, the token still at check
    await page.locator('.djs-element[data-element-id=approve]').first().waitFor()
    await page.locator('.djs-element.has-token[data-element-id=check]').waitFor()
  })
  const inst = await rest(ctx.server, 'GET', `/process-instances/${key}`)
  assert.equal(String(inst.processDefinitionKey), String(target))
  assert.equal(inst.processDefinitionVersion, 2)
})

test('lists batch operations with their progress', { timeout: 60_000 }, async () => {
  const m = model()
  await deploy(ctx.server, m)
  for (let i = 0; i < 2; i++) await startInstance(ctx.server, m)
  const batch = await rest(ctx.server, 'POST', '/process-instances/cancellation', {
    filter: { processDefinitionId: m.id, state: 'ACTIVE' },
  })
  const batchKey = String(batch.batchOperationKey)
  await withPage('batch-operations', async (page) => {
    await page.goto(`${ctx.server.rest}/operate`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Batches' }).click()
    await page.getByRole('heading', { name: 'Batch operations' }).waitFor()
    const row = page.getByRole('row').filter({ hasText: batchKey })
    await row.getByText('CANCEL_PROCESS_INSTANCE').waitFor()
    // the page follows the batch until it completes
    await row.getByText('COMPLETED').waitFor({ timeout: 20_000 })
    assert.match(await row.textContent(), /2 done, 0 failed, of 2/)
    // a completed batch can no longer be canceled, suspended or resumed
    assert.equal(await row.getByRole('button').count(), 0)
  })
})

test('shows a decision instance\'s inputs, matched rules and outputs', { timeout: 60_000 }, async () => {
  const form = new FormData()
  form.append('resources', new Blob([readFileSync(join(ROOT, 'examples', 'discount.dmn'))]), 'discount.dmn')
  await rest(ctx.server, 'POST', '/deployments', form)
  const res = await rest(ctx.server, 'POST', '/decision-definitions/evaluation', {
    decisionDefinitionId: 'discount', variables: { customer: 'gold', amount: 120 },
  })
  const evaluation = res.evaluatedDecisions[0].decisionEvaluationInstanceKey
  await withPage('decision-instance', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/decisions/${res.decisionDefinitionKey}`)
    // the evaluations list leads to the instance (history may be a moment behind)
    await page.locator(`a[href="/operate/decision-instances/${evaluation}"]`).click({ timeout: 15_000 })
    await page.waitForURL(`**/operate/decision-instances/${evaluation}`)
    const inputs = page.getByRole('table', { name: 'Inputs' })
    await inputs.getByRole('row').filter({ hasText: 'Customer' }).getByText('"gold"').waitFor()
    await inputs.getByRole('row').filter({ hasText: 'Amount' }).getByText('120').waitFor()
    const rules = page.getByRole('table', { name: 'Matched rules' })
    await rules.getByRole('row').filter({ hasText: 'gold_large' }).getByText('Rate = 0.2').waitFor()
    // the table is shown, with the matched rule (and only it) marked
    await page.locator('.dmn[data-view=decisionTable]').waitFor()
    await page.locator('.dmn td.rule-index.matched-rule[data-row-id=gold_large]').waitFor()
    assert.equal(await page.locator('.dmn td.rule-index.matched-rule').count(), 1)
  })
})

test('an instance\'s actions are reachable by keyboard, with a visible focus', { timeout: 60_000 }, async () => {
  const m = model('ui_two.bpmn')
  await deploy(ctx.server, m)
  const key = await startInstance(ctx.server, m)
  await withPage('keyboard-instance', async (page) => {
    await page.goto(`${ctx.server.rest}/operate/processes/${key}`)
    await page.locator('.diagram[data-ready=true]').waitFor()
    /** Presses `key` (Tab) until the focused element's label matches `test` (at most 80
     *  times): its label, and whether it shows an outline. */
    const tabTo = async (test, key = 'Tab') => {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press(key)
        const found = await page.evaluate((src) => {
          const el = document.activeElement
          if (el === document.body) return null
          const label = el.getAttribute('aria-label') || el.labels?.[0]?.textContent.trim() || el.textContent.trim()
          if (!new RegExp(src).test(label)) return null
          const style = getComputedStyle(el)
          return { label, outline: style.outlineStyle !== 'none' && style.outlineWidth !== '0px' }
        }, test.source)
        if (found) return found
      }
      throw new Error(`Tab never reached ${test}`)
    }
    // the skip link comes first, then the actions in order; each focused one shows its focus
    const skip = await tabTo(/Skip to content/)
    assert.ok(skip.outline, 'the focus is visible')
    const modify = await tabTo(/Modify the instance/)
    assert.ok(modify.outline, 'the focus is visible on the panel')
    await page.keyboard.press('Enter')
    await tabTo(/^Operation/)
    await page.keyboard.press('Tab') // From element
    await page.keyboard.press('ArrowDown') // check
    await page.keyboard.press('ArrowDown') // ... to check, the second flow node
    await page.keyboard.press('Tab') // To element
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown') // approve
    const add = await tabTo(/Add to the modification/)
    assert.ok(add.outline)
    await page.keyboard.press('Enter')
    await page.getByText('Move the tokens at Check to Approve').waitFor()
    await tabTo(/Apply 1 modification/)
    await page.keyboard.press('Enter')
    await page.locator('.djs-element.has-token[data-element-id=approve]').waitFor({ timeout: 15_000 })
    // the focus stays in the panel, and the instance's cancel is back up the page
    await page.getByLabel('Operation').and(page.locator(':focus')).waitFor()
    await tabTo(/^Cancel instance/, 'Shift+Tab')
    await page.keyboard.press('Enter')
    // the question takes the focus, on its safe answer; the other is one Shift+Tab away
    await page.getByRole('button', { name: 'No', exact: true }).and(page.locator(':focus')).waitFor()
    await page.keyboard.press('Shift+Tab')
    await page.getByRole('button', { name: 'Yes, cancel it' }).and(page.locator(':focus')).waitFor()
    await page.keyboard.press('Enter')
    await page.locator('.summary').getByText('Canceled').waitFor({ timeout: 15_000 })
  })
  const inst = await rest(ctx.server, 'GET', `/process-instances/${key}`)
  assert.equal(inst.state, 'TERMINATED')
})

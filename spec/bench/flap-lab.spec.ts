import { expect } from 'chai';
import { runScenario, startLab, type Lab, type ScenarioRun } from '../support/flap-lab/lab.js';
import { ZONES } from '../support/flap-lab/scenarios.js';
import { describe as said, figures, figuresByZone } from '../support/flap-lab/score.js';

/**
 * The targets of issue 18 for the culprit localisation, on a fixed set of flap
 * lab scenarios (spec/support/flap-lab/; `npm run bench -- flap-lab` measures
 * the same on 300): the right zone and culprit in at least 90 % of the located
 * scenarios, no wrong culprit given with confidence >= 0.8, and a floor on
 * how many scenarios of each zone are located at all.
 */

const SEED = 18;
const SCENARIOS = 40;
/** Least share of each zone's scenarios that must be located (a localisation that abstains too often is no use either). */
const MIN_RECALL = { near: 0.7, origin: 0.7, path: 0.5, moas: 0.7 } as const;

describe('Flap lab: culprit localisation against the ground truth of 40 generated scenarios', function () {
  this.timeout(300_000);
  let lab: Lab;
  const runs: ScenarioRun[] = [];

  before(async function () {
    this.timeout(300_000);
    lab = await startLab();
    for (let index = 0; index < SCENARIOS; index++) runs.push(await runScenario(lab, SEED, index));
  });
  after(async () => lab?.close());

  const line = (r: ScenarioRun) => `#${r.score.index} ${r.scenario.description}: ${r.score.primary?.prefix} ${said(r.score.primary?.localization ?? null)}`;

  it('gives the right zone and culprit in at least 90 % of the located scenarios', () => {
    const all = figures(runs.map((r) => r.score));
    const wrong = runs.filter((r) => r.score.located && !r.score.right).map(line);
    expect(all.located, 'located scenarios').to.be.above(0);
    expect(all.precision, `wrong answers:\n${wrong.join('\n')}`).to.be.at.least(0.9);
  });

  it('gives no wrong culprit with confidence >= 0.8, on faulted prefixes or noise', () => {
    const confident = runs.flatMap((r) =>
      r.score.wrongConfident.map((w) => `#${r.score.index} ${r.scenario.description}: ${w.prefix} ${w.said}, truth ${JSON.stringify(w.truth)}`),
    );
    expect(confident.length, `confident wrong localisations:\n${confident.slice(0, 30).join('\n')}`).to.equal(0);
  });

  it('locates a fair share of the scenarios of every zone', () => {
    for (const { zone, figures: f } of figuresByZone(runs.map((r) => r.score))) {
      if (zone === 'all') continue;
      expect(f.scenarios, zone).to.equal(SCENARIOS / ZONES.length);
      const missed = runs.filter((r) => r.score.zone === zone && !r.score.located).map(line);
      expect(f.recall, `${zone} recall; not located:\n${missed.join('\n')}`).to.be.at.least(MIN_RECALL[zone]);
    }
  });
});

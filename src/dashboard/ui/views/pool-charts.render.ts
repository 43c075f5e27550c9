import { h } from '../dom.ts';
import { href } from '../router.ts';
import { pageView } from '../ui-kit.ts';

/** A pool's health page: its title, the way back, the range picker, the step, and the two charts' boxes. */
export function renderPoolChartsPage(
  pool: { id: string; name: string },
  stepSeconds: number,
  picker: HTMLElement,
): { view: HTMLElement; healthBox: HTMLElement; rttBox: HTMLElement } {
  const healthBox = h('div', { class: 'chart', role: 'img', 'aria-label': `Health of ${pool.name} and its origins` });
  const rttBox = h('div', {
    class: 'chart',
    role: 'img',
    'aria-label': `Round-trip time of the origins of ${pool.name}`,
  });
  const view = pageView(
    `Health of ${pool.name}`,
    h('p', null, h('a', { href: href('lb', 'pools', pool.id) }, '← Edit pool')),
    picker,
    h('p', null, `One point per ${stepSeconds / 60} minute(s).`),
    healthBox,
    rttBox,
  );
  return { view, healthBox, rttBox };
}

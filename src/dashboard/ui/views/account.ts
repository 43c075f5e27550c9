import { createZone, deleteZone, type Zone } from '../../../client/index.ts';
import { client, page } from '../api.ts';
import { replace } from '../dom.ts';
import { state } from '../state.ts';
import { renderZones } from './account.render.ts';

/** Zones: loaded and changed through the client; account.render.ts draws the page. */
export async function zones(main: HTMLElement, pageNumber = 1): Promise<void> {
  const result = await page<Zone>('/zones', pageNumber, 50, { 'account.id': state.accountId });
  replace(
    main,
    renderZones(result, {
      create: async (name) => {
        await createZone(client, state.accountId, name);
        await zones(main);
      },
      remove: async (zone) => {
        await deleteZone(client, zone.id);
        await zones(main);
      },
      showPage: (next) => void zones(main, next),
    }),
  );
}

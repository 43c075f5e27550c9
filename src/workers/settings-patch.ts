import { parseJsonText, parseWith } from '../api-kit/body.ts';
import { clip } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';
import { readForm } from './upload.ts';
import { ScriptAndVersionSettingsSchema, type ScriptAndVersionSettings } from './schemas.ts';

const CODE = 10021;

/**
 * Reads `PATCH .../scripts/{script}/settings`: multipart/form-data with one `settings` part holding JSON
 * (what the API documents and wrangler's client sends). A JSON body is accepted too, as the same object.
 */
export async function parseSettingsPatch(request: Request): Promise<ScriptAndVersionSettings> {
  const contentType = (request.headers.get('content-type') ?? '').toLowerCase();
  if (!contentType.startsWith('multipart/form-data')) {
    const text = (await request.text()).trim();
    if (!contentType.includes('json') || text === '') {
      throw WorkerErrors.malformedUpload(
        `expected Content-Type multipart/form-data with a "settings" part holding JSON, got "${clip(contentType || 'none')}"`,
      );
    }
    return parseWith(ScriptAndVersionSettingsSchema, parseJsonText(text, CODE, 'request body'), CODE);
  }
  const form = await readForm(request);
  const part = form.get('settings');
  if (part === null) {
    // Form encoders that flatten objects send settings[logpush]=... fields; say what is expected instead.
    const flattened = [...form.keys()].some((key) => key.startsWith('settings['));
    throw WorkerErrors.malformedUpload(
      flattened
        ? 'the settings arrived as flattened form fields (settings[...]): send one "settings" part holding the settings as JSON'
        : 'the "settings" part is missing',
    );
  }
  const text = typeof part === 'string' ? part : await part.text();
  return parseWith(ScriptAndVersionSettingsSchema, parseJsonText(text, CODE, 'the "settings" part'), CODE);
}

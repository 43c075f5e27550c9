/* global document, fetch */
// The page: the list drawn from GET /api/todos, every title put in as text.
const list = document.getElementById('todos');
const status = document.getElementById('status');

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
  return response.status === 204 ? null : response.json();
}

function item(todo) {
  const li = document.createElement('li');
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.id = `todo-${todo.id}`;
  box.checked = todo.done;
  box.addEventListener('change', () => act(() => call('PATCH', `/api/todos/${todo.id}`, { done: box.checked })));
  const label = document.createElement('label');
  label.htmlFor = box.id;
  label.textContent = todo.title;
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = 'Delete';
  remove.setAttribute('aria-label', `Delete ${todo.title}`);
  remove.addEventListener('click', () => act(() => call('DELETE', `/api/todos/${todo.id}`)));
  li.append(box, label, remove);
  return li;
}

async function draw() {
  const todos = await call('GET', '/api/todos');
  list.replaceChildren(...todos.map(item));
  status.textContent = `${todos.filter((t) => !t.done).length} of ${todos.length} left`;
}

async function act(change) {
  try {
    await change();
    await draw();
  } catch (error) {
    status.textContent = error.message;
  }
}

document.getElementById('add').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('title');
  act(async () => {
    await call('POST', '/api/todos', { title: input.value });
    input.value = '';
  });
});

act(async () => {});

// The lookup box on a host with files only, where `/lookup` has no handler (src/api/handler.ts
// `lookupAnswer` does this on the Node server and Workers): a username goes straight to its page,
// folded and trimmed as the handler folds it; anything else goes on to the lookup page, which says
// what a username is. Loaded only by static builds (src/layouts/LookupBox.astro).
const USERNAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.classList.contains('lookup')) return;
  const input = form.elements.namedItem('u');
  if (!(input instanceof HTMLInputElement)) return;
  const typed = input.value.trim();
  // Only A-Z is folded, as the handler does: a non-ASCII letter stays, and is no username.
  const name = (typed.startsWith('@') ? typed.slice(1) : typed).replace(/[A-Z]+/g, (m) => m.toLowerCase());
  if (!USERNAME.test(name)) return;
  event.preventDefault();
  location.assign(`/p/${name}`);
});

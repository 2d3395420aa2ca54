// The lookup box on a host with files only, where `/lookup` has no handler (src/api/handler.ts
// `lookupAnswer` does this on the Node server and Workers): a username goes straight to its page,
// folded and trimmed as the handler folds it; anything else goes on to the lookup page, which says
// what a username is. Loaded only by static builds (src/layouts/LookupBox.astro).
const USERNAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** A name as the handler reads one typed: trimmed, one leading `@` dropped, A-Z folded (a non-ASCII letter stays, and is no username). */
const nameOf = (typed) => {
  const t = typed.trim();
  return (t.startsWith('@') ? t.slice(1) : t).replace(/[A-Z]+/g, (m) => m.toLowerCase());
};
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.classList.contains('lookup')) return;
  const input = form.elements.namedItem('u');
  if (!(input instanceof HTMLInputElement)) return;
  const name = nameOf(input.value);
  if (!USERNAME.test(name)) return;
  event.preventDefault();
  location.assign(`/p/${name}`);
});

// The lookup page, which a host with files only serves for any /lookup: what was typed back in the
// box, and why it led nowhere, as the handler's lookup page says it (src/api/handler.ts lookupPage).
document.addEventListener('DOMContentLoaded', () => {
  const typed = new URLSearchParams(location.search).get('u');
  const problem = document.querySelector('.lookup-problem');
  const input = document.getElementById('lookup-name');
  if (typed === null || !problem || !(input instanceof HTMLInputElement)) return;
  const name = nameOf(typed);
  // A username (an address typed by hand): its page, as the handler's redirect.
  if (USERNAME.test(name)) return location.replace(`/p/${name}`);
  const shown = [...typed.trim()].length > 64 ? `${[...typed.trim()].slice(0, 64).join('')}…` : typed.trim();
  input.value = shown;
  problem.textContent = shown === '' ? 'Type a username to find its profile.' : `“${shown}” is not a username.`;
});

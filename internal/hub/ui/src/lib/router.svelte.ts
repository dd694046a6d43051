// The hub's routes, read from location.pathname: /, /tools, /tools/<code>,
// /signin, /settings/about. navigate() pushes a new entry; links with
// data-route are intercepted by App.svelte.
export type Route =
  | { name: 'hub' }
  | { name: 'tool'; code: string }
  | { name: 'signin' }
  | { name: 'settings' }
  | { name: 'notFound' };

export function parse(pathname: string): Route {
  if (pathname === '/' || pathname === '/tools' || pathname === '/tools/') return { name: 'hub' };
  const m = /^\/tools\/([^/]+)\/?$/.exec(pathname);
  if (m) {
    try {
      return { name: 'tool', code: decodeURIComponent(m[1]) };
    } catch {
      return { name: 'notFound' };
    }
  }
  if (pathname === '/signin') return { name: 'signin' };
  if (pathname === '/settings' || pathname.startsWith('/settings/')) return { name: 'settings' };
  return { name: 'notFound' };
}

export const router = $state({ route: parse(location.pathname), path: location.pathname });

export function navigate(path: string, replace = false) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  router.path = location.pathname;
  router.route = parse(location.pathname);
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  router.path = location.pathname;
  router.route = parse(location.pathname);
});

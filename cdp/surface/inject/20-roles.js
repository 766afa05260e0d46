// @ts-check
// Roles, as the outline and Chrome's accessibility tree name them.
// A part of the page script: see 99-api.js.

const INPUT_ROLES = {
  button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button', color: 'button',
  checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
};
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base']);
const ACTION_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem',
  'menuitemcheckbox', 'menuitemradio', 'option', 'combobox', 'textbox', 'searchbox', 'slider',
  'spinbutton', 'treeitem', 'listbox']);
const CONTENT_NAME = new Set(['button', 'link', 'heading', 'cell', 'columnheader', 'rowheader',
  'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'checkbox',
  'radio', 'switch', 'listitem', 'paragraph', 'tooltip', 'legend', 'caption', 'status', 'alert']);
const LEAF_NAME = new Set(['cell', 'columnheader', 'rowheader', 'listitem', 'paragraph', 'legend', 'caption', 'status', 'alert']);
// Roles that make a line of their own in the full outline.
const STRUCT_ROLES = new Set(['heading', 'list', 'listitem', 'navigation', 'main', 'banner',
  'contentinfo', 'complementary', 'form', 'region', 'article', 'dialog', 'alertdialog', 'table',
  'row', 'cell', 'columnheader', 'rowheader', 'grid', 'gridcell', 'group', 'img', 'paragraph',
  'progressbar', 'meter', 'separator', 'tablist', 'tabpanel', 'menu', 'menubar', 'toolbar',
  'tree', 'alert', 'status', 'search', 'figure', 'radiogroup', 'iframe']);
const BLOCK = new Set(['div', 'p', 'li', 'ul', 'ol', 'section', 'article', 'header', 'footer',
  'nav', 'main', 'aside', 'form', 'table', 'tr', 'td', 'th', 'tbody', 'thead', 'tfoot', 'h1',
  'h2', 'h3', 'h4', 'h5', 'h6', 'br', 'hr', 'pre', 'blockquote', 'dl', 'dt', 'dd', 'figure',
  'figcaption', 'fieldset', 'details', 'summary', 'label', 'dialog']);
const TEXT_TYPES = new Set(['text', 'search', 'email', 'tel', 'url', 'password', 'number', '']);

function inputType(el) { return (el.getAttribute('type') || 'text').toLowerCase(); }

function roleOf(el) {
  const explicit = el.getAttribute('role');
  if (explicit != null) {
    const t = explicit.trim().split(/\s+/)[0].toLowerCase();
    if (t === 'none' || t === 'presentation') return '';
    if (t) return t;
  }
  switch (el.localName) {
    case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
    case 'button': return 'button';
    case 'input': {
      const t = inputType(el);
      if (t === 'hidden') return '';
      if (el.hasAttribute('list') && ['text', 'search', 'email', 'tel', 'url'].includes(t)) return 'combobox';
      return INPUT_ROLES[t] || 'textbox';
    }
    case 'textarea': return 'textbox';
    case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'option': return 'option';
    case 'img': return el.getAttribute('alt') === '' ? '' : 'img';
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
    case 'ul': case 'ol': case 'menu': return 'list';
    case 'li': return 'listitem';
    case 'nav': return 'navigation';
    case 'main': return 'main';
    case 'header': return el.closest('article,aside,main,nav,section') ? '' : 'banner';
    case 'footer': return el.closest('article,aside,main,nav,section') ? '' : 'contentinfo';
    case 'aside': return 'complementary';
    case 'form': return 'form';
    case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
    case 'article': return 'article';
    case 'dialog': return 'dialog';
    case 'table': return 'table';
    case 'tr': return 'row';
    case 'td': return 'cell';
    case 'th': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
    case 'summary': return 'button';
    case 'details': case 'fieldset': return 'group';
    case 'p': return 'paragraph';
    case 'hr': return 'separator';
    case 'progress': return 'progressbar';
    case 'meter': return 'meter';
    case 'iframe': case 'frame': return 'iframe';
    case 'figure': return 'figure';
    case 'search': return 'search';
  }
  if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
  return '';
}

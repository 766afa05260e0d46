// The popup: a read-only state line for the current tab (reading it never
// creates consent), "Share current tab" and "Revoke". The worker does the
// rest; the popup never talks to the native host.
const $ = (id) => document.getElementById(id);

async function currentTab() {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ? tab.id : null;
}

async function ask(op) {
  const tab = await currentTab();
  const res = await chrome.runtime.sendMessage({ op, tab });
  $('state').textContent = 'This tab: ' + ((res && res.state) || 'not shared');
  $('error').textContent = res && !res.ok ? res.error : '';
}

$('share').addEventListener('click', () => ask('share'));
$('revoke').addEventListener('click', () => ask('revoke'));
ask('status');

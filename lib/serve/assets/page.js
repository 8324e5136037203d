// The live page's script: one EventSource, the whole state on every message, DOM built with textContent
// (never innerHTML), clocks ticking locally between messages. No library, nothing fetched from elsewhere.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const token = document.querySelector('meta[name="ralph-token"]').content;
  let state = null;
  let skew = 0;
  let messages = 0;

  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (key === 'class') node.className = value;
      // Through CSSOM: the page's CSP allows no style attributes.
      else if (key === 'width') node.style.width = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
    return node;
  };
  const now = () => Date.now() + skew;
  const duration = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
    return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
  };
  const clock = (iso) => (iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : '');
  const money = (usd) => `$${(usd || 0).toFixed(usd >= 1 ? 2 : 4)}`;
  const count = (n) => (n || 0).toLocaleString('en-US');
  const outcomeText = { pass: 'pass', fail: 'fail', no_change: 'no change', question: 'question', running: 'running', interrupted: 'interrupted' };

  function badge() {
    const m = state.model;
    const s = state.status;
    if (!m.session) return ['no run yet', ''];
    if (m.end) return [m.end.status.replace('_', ' '), m.end.exitCode === 0 ? 'ok' : m.end.exitCode === 2 ? 'limit' : 'bad'];
    if (!state.alive) return ['not running (ended without a summary)', 'bad'];
    if (!s) return ['running', 'running'];
    if (s.state === 'paused') return ['paused', 'paused'];
    if (s.state === 'waiting_usage_reset') return ['waiting for usage reset', 'waiting'];
    if (s.state === 'backing_off') return ['backing off', 'waiting'];
    return [s.pausedSince ? 'pausing' : s.stopRequestedAt ? 'stopping' : s.state, 'running'];
  }

  function renderHeader() {
    const m = state.model;
    $('repo').textContent = state.repo;
    const [text, kind] = badge();
    $('badge').textContent = text;
    $('badge').className = `badge ${kind}`;
    const sess = m.session;
    $('facts').textContent = sess
      ? [`session ${sess.id}`, `${sess.source} (${sess.target})`, `agent ${sess.agent}`, sess.branch ? `branch ${sess.branch}` : null, `PID ${sess.pid}${state.alive ? '' : ' (ended)'}`, `started ${clock(sess.startedAt)}`].filter(Boolean).join(' · ')
      : 'waiting for a run in this repository (events appear in .ralph/events.jsonl)';
    const s = state.status;
    const steerable = state.control && state.alive && !m.end;
    $('controls').hidden = !steerable;
    if (steerable) {
      const paused = Boolean(s && s.pausedSince);
      $('pause').hidden = paused;
      $('unpause').hidden = !paused;
      $('stop').disabled = Boolean(s && s.stopRequestedAt);
      $('stop').textContent = s && s.stopRequestedAt ? 'Stop requested' : 'Stop after this iteration';
    }
  }

  function renderNow() {
    const m = state.model;
    const s = state.status;
    const box = $('now');
    box.replaceChildren();
    const runningItems = m.timeline.filter((item) => item.outcome === 'running');
    const notes = [];
    if (s && !m.end) {
      if (s.stopRequestedAt) notes.push(`stop requested at ${clock(s.stopRequestedAt)}: the run ends after this iteration`);
      if (s.state === 'paused') notes.push(`paused since ${clock(s.pausedSince)}: no new iteration starts until unpause`);
      else if (s.pausedSince) notes.push(`paused since ${clock(s.pausedSince)}: the current iteration finishes, then no new one starts`);
      if (s.waitUntil && (s.state === 'waiting_usage_reset' || s.state === 'backing_off')) notes.push(el('span', { 'data-until': s.waitUntil, class: 'countdown' }, ''));
    }
    box.className = `now ${s && s.state === 'paused' ? 'paused' : runningItems.length ? '' : 'idle'}`;
    for (const item of runningItems) {
      const max = m.session ? m.session.maxIterations : '?';
      box.append(
        el('div', { class: 'task', id: runningItems.length === 1 ? 'now-task' : null, 'data-iteration': String(item.iteration) }, item.ofRun != null && item.ofRun !== item.iteration ? `Iteration ${item.iteration} (${item.ofRun}/${max} in this run): ` : `Iteration ${item.iteration}/${max}: `, el('code', {}, item.taskId), ` ${item.taskTitle}`),
        el('div', { class: 'sub' }, 'running for ', el('span', { 'data-since': item.startedAt, class: 'elapsed' }, ''), item.attempts > 1 ? ` · attempt ${item.attempts}` : '', item.worker ? ` · worker w${item.worker}` : '', item.costUsd ? ` · ${money(item.costUsd)}` : ''),
      );
    }
    if (runningItems.length === 0) {
      const text = m.end ? `${m.end.status.replace('_', ' ')}: ${m.end.message} (exit ${m.end.exitCode}, ended ${clock(m.end.endedAt)})` : m.session ? (state.alive ? 'between iterations' : 'the run is gone without a summary (killed?)') : 'no run yet';
      box.append(el('div', { class: 'task', id: 'now-task' }, text));
    }
    for (const note of notes) box.append(el('div', { class: 'note' }, note));
  }

  function renderWorkers() {
    const workers = state.workers;
    $('workers-section').hidden = !workers || workers.length === 0;
    if (!workers || workers.length === 0) return;
    $('workers').replaceChildren(
      el('tr', {}, el('th', {}, 'worker'), el('th', {}, 'iteration'), el('th', {}, 'task'), el('th', {}, 'running for')),
      ...workers.map((worker) =>
        el('tr', { 'data-worker': String(worker.worker) }, el('td', {}, `w${worker.worker}`), el('td', {}, `#${worker.iteration}`), el('td', {}, el('code', {}, worker.task.id), ` ${worker.task.title}`), el('td', {}, el('span', { 'data-since': worker.startedAt }, ''))),
      ),
    );
  }

  // --remote: who holds which task on the remote (as last fetched), and who landed what once the run ended.
  function renderRemote() {
    const remote = state.remote;
    $('remote-section').hidden = !remote;
    if (!remote) return;
    $('remote-title').textContent = `Claims on ${remote.name}/${remote.branch}`;
    const notes = [remote.landed, remote.error ? `the claims cannot be read: ${remote.error}` : null].filter(Boolean);
    $('remote-line').textContent = notes.join(' · ');
    $('remote-line').hidden = notes.length === 0;
    const head = el('tr', {}, ...['task', 'host', 'since', 'renewed', ''].map((name) => el('th', {}, name)));
    const rows = remote.claims.map((claim) =>
      el('tr', { 'data-claim': claim.task, class: claim.expired ? 'expired' : null }, el('td', {}, el('code', {}, claim.task)), el('td', {}, `${claim.host} (pid ${claim.pid})`), el('td', {}, `${clock(claim.since)} (`, el('span', { 'data-since': claim.since }, ''), ' ago)'), el('td', {}, el('span', { 'data-since': claim.renewedAt }, ''), ' ago'), el('td', {}, claim.expired ? 'expired: another host may take it over' : '')),
    );
    $('claims').replaceChildren(...(rows.length > 0 ? [head, ...rows] : remote.error ? [] : [el('tr', {}, el('td', { class: 'sub' }, 'no task is claimed'))]));
  }

  function renderCards() {
    const m = state.model;
    const ended = m.timeline.filter((item) => item.outcome !== 'running');
    const sum = (key) => m.timeline.reduce((total, item) => total + (item[key] || 0), 0);
    const by = (outcome) => ended.filter((item) => item.outcome === outcome).length;
    const end = m.end ? Date.parse(m.end.endedAt) : now();
    const cards = [
      ['iterations', ended.length],
      ['passed', by('pass')],
      ['failed', by('fail')],
      ['no change', by('no_change')],
      ['questions', by('question')],
      ['cost', money(sum('costUsd'))],
      ['tokens in / out', `${count(sum('inputTokens'))} / ${count(sum('outputTokens'))}`],
      ['elapsed', m.session ? el('span', { 'data-since': m.session.startedAt, 'data-end': m.end ? m.end.endedAt : '' }, duration(end - Date.parse(m.session.startedAt))) : '—'],
    ];
    $('cards').replaceChildren(...cards.map(([label, value]) => el('div', { class: 'card' }, el('b', {}, value), el('span', { class: 'label' }, label))));
  }

  function renderTimeline() {
    const items = state.model.timeline;
    if (items.length === 0) return $('timeline').replaceChildren(el('p', { class: 'sub' }, 'no iteration yet'));
    $('timeline').replaceChildren(
      ...items.map((item) =>
        el(
          'div',
          { class: 'row', 'data-iteration': String(item.iteration), 'data-outcome': item.outcome },
          el('span', { class: 'num' }, `#${item.iteration}`),
          el('span', { class: 'label', title: `${item.taskId} ${item.taskTitle}${item.reason ? `\n${item.reason}` : ''}` }, el('code', {}, item.taskId), ` ${item.taskTitle}`),
          // Widths are set by tick(): a running bar grows while the agent is quiet.
          el('div', {}, el('div', { class: `bar ${item.outcome}`, 'data-started': item.startedAt, 'data-duration': item.durationMs === null ? null : String(item.durationMs) })),
          el('span', { class: 'meta' }, `${outcomeText[item.outcome] || item.outcome} · `, item.durationMs === null ? el('span', { 'data-since': item.startedAt }, '') : duration(item.durationMs), item.costUsd ? ` · ${money(item.costUsd)}` : ''),
        ),
      ),
    );
  }

  /** Each bar's width: its duration (a running one's elapsed time) against the longest. */
  function sizeBars() {
    const bars = [...document.querySelectorAll('#timeline .bar')];
    const lengths = bars.map((bar) => (bar.hasAttribute('data-duration') ? Number(bar.getAttribute('data-duration')) : now() - Date.parse(bar.getAttribute('data-started'))));
    const longest = Math.max(1000, ...lengths);
    bars.forEach((bar, index) => (bar.style.width = `${Math.max(0.5, (100 * lengths[index]) / longest).toFixed(1)}%`));
  }

  function renderActivity() {
    const list = $('activity');
    const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
    list.replaceChildren(...state.model.activity.map((line) => el('li', { class: line.kind }, el('time', {}, clock(line.at)), line.kind === 'tool' ? `↳ ${line.text}` : line.text)));
    if (atBottom) list.scrollTop = list.scrollHeight;
  }

  // Rebuilt only when the questions change, and then with what was typed kept: an answer being written
  // survives every update.
  let questionsKey = null;
  function renderQuestions() {
    const questions = state.questions || [];
    const key = JSON.stringify([state.control, questions.map((item) => [item.scope, item.taskId, item.askedAt, item.answer || null])]);
    if (key === questionsKey) return;
    questionsKey = key;
    const typed = new Map([...document.querySelectorAll('#questions textarea')].map((box) => [box.getAttribute('data-key'), box.value]));
    $('questions-section').hidden = questions.length === 0;
    $('questions').replaceChildren(
      ...questions.map((item) => {
        const head = el('div', {}, el('code', {}, item.taskId), ` ${item.taskTitle} · iteration ${item.iteration} · asked ${clock(item.askedAt)}`);
        const ask = el('div', { class: 'ask' }, item.question);
        if (item.answer !== undefined) return el('li', { 'data-task': item.taskId }, head, ask, el('div', { class: 'sub' }, `answered: ${item.answer} (the next iteration on ${item.taskId} gets it)`));
        if (!state.control) return el('li', { 'data-task': item.taskId }, head, ask, el('div', { class: 'sub' }, `waiting for an answer: ralph answer ${item.taskId} "…"`));
        const box = el('textarea', { 'aria-label': `answer to ${item.taskId}`, 'data-key': `${item.scope}/${item.taskId}/${item.askedAt}` });
        box.value = typed.get(box.getAttribute('data-key')) || '';
        const said = el('span', { class: 'sub' }, '');
        const form = el('form', {}, box, el('button', { type: 'submit' }, 'Answer'), said);
        form.addEventListener('submit', (event) => {
          event.preventDefault();
          answer(`${item.scope}/${item.taskId}`, box.value, said);
        });
        return el('li', { 'data-task': item.taskId }, head, ask, form);
      }),
    );
  }

  async function answer(task, text, said) {
    said.textContent = '…';
    try {
      const response = await fetch('api/answer', { method: 'POST', headers: { 'content-type': 'application/json', 'x-ralph-token': token }, body: JSON.stringify({ task, answer: text }) });
      said.textContent = (await response.json()).message;
    } catch (error) {
      said.textContent = `could not reach ralph serve: ${error.message}`;
    }
  }

  function renderReports() {
    const reports = state.reports;
    if (reports.length === 0) return $('reports').replaceChildren(el('li', { class: 'sub' }, 'none yet: a report is written when a run ends'));
    $('reports').replaceChildren(
      ...reports.map((report) => el('li', {}, report.session, ' ', report.html ? el('a', { href: report.html }, 'HTML') : '', ' ', report.markdown ? el('a', { href: report.markdown }, 'Markdown') : '')),
    );
  }

  // Elapsed times and countdowns move every second without a message from the server.
  function tick() {
    sizeBars();
    for (const node of document.querySelectorAll('[data-since]')) {
      const end = node.getAttribute('data-end');
      node.textContent = duration((end ? Date.parse(end) : now()) - Date.parse(node.getAttribute('data-since')));
    }
    for (const node of document.querySelectorAll('[data-until]')) {
      const left = Date.parse(node.getAttribute('data-until')) - now();
      node.textContent = left > 0 ? `waiting until ${clock(node.getAttribute('data-until'))} (${duration(left)} left)` : 'resuming…';
    }
  }

  function render() {
    renderHeader();
    renderNow();
    renderQuestions();
    renderWorkers();
    renderRemote();
    renderCards();
    renderTimeline();
    renderActivity();
    renderReports();
    tick();
    $('footer').textContent = `live from ralph serve · updated ${clock(state.serverTime)} · ${messages} update${messages === 1 ? '' : 's'}`;
  }

  async function steer(action) {
    $('control-answer').textContent = '…';
    try {
      const response = await fetch('api/control', { method: 'POST', headers: { 'content-type': 'application/json', 'x-ralph-token': token }, body: JSON.stringify({ action }) });
      $('control-answer').textContent = (await response.json()).message;
    } catch (error) {
      $('control-answer').textContent = `could not reach ralph serve: ${error.message}`;
    }
  }
  $('pause').addEventListener('click', () => steer('pause'));
  $('unpause').addEventListener('click', () => steer('unpause'));
  $('stop').addEventListener('click', () => {
    if (confirm('Stop the run after its current iteration?')) steer('stop');
  });

  const source = new EventSource('events');
  source.onmessage = (message) => {
    state = JSON.parse(message.data);
    skew = Date.parse(state.serverTime) - Date.now();
    messages += 1;
    render();
  };
  source.onerror = () => {
    $('badge').textContent = 'reconnecting…';
    $('badge').className = 'badge';
  };
  setInterval(() => state && tick(), 1000);
})();

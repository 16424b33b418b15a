package report

// The page's one script, inline so that the report stays one offline file:
// it highlights a finding's operations on the timeline (class hl) when
// the address names the finding (#finding-K, from a link or typed in),
// and an operation named by #op-N. It asks for nothing over the network.
//
// Following a link from an operation's box back to its finding scrolls to
// the finding's text; any other way to #finding-K scrolls to its
// operations, which is what the finding's "on the timeline" link is for.

const timelineCSS = `<style>
svg.timeline .op.hl rect{stroke:#0b3fa8;stroke-width:3}
svg.timeline.dim .op:not(.hl){opacity:.3} svg.timeline.dim .hold{opacity:.6}
svg.timeline a{cursor:pointer}
.finding.sel{background:#fff8d6;outline:2px solid #ffd400;outline-offset:2px}
.finding .on{font-size:12px;margin-left:6px}
table.stats{margin:4px 0 8px} table.stats th{font-weight:500;color:#555} table.stats td.num{text-align:right}
table.stats table.stats{margin:0}
.kindhead{margin:14px 0 2px;font-weight:600}
.legend{font-size:12px;margin:2px 0 6px}
</style>`

const timelineScript = `<script>
(function(){
  var toText = false;
  function clear(){
    document.querySelectorAll('.hl').forEach(function(e){e.classList.remove('hl')});
    document.querySelectorAll('.finding.sel').forEach(function(e){e.classList.remove('sel')});
    document.querySelectorAll('svg.dim').forEach(function(e){e.classList.remove('dim')});
  }
  function show(){
    var m = /^#(finding|op)-(\d+)$/.exec(location.hash);
    clear();
    if (!m) return;
    var target = null;
    if (m[1] === 'finding') {
      var ops = document.querySelectorAll('[data-findings~="finding-' + m[2] + '"]');
      ops.forEach(function(e){e.classList.add('hl'); e.closest('svg').classList.add('dim')});
      var text = document.getElementById('finding-' + m[2]);
      if (text) {
        text.classList.add('sel');
        if (text.tagName === 'DETAILS') text.open = true;
      }
      target = toText ? text : (ops[0] || text);
    } else {
      var el = document.getElementById('op-' + m[2]);
      var op = el && el.closest('.op');
      if (op) op.classList.add('hl');
      target = op || el;
    }
    toText = false;
    if (target) target.scrollIntoView({block: 'center'});
  }
  document.addEventListener('click', function(e){
    var a = e.target.closest && e.target.closest('a');
    if (!a) return;
    var href = a.getAttribute('href') || '';
    if (href.charAt(0) !== '#') return;
    toText = !!a.closest('svg');
    if (href === location.hash) { e.preventDefault(); show(); }
  });
  window.addEventListener('hashchange', show);
  // Now, so that the operations are marked at once; and again once the
  // page has loaded, after the browser's own scroll to the address's
  // element, which would otherwise win.
  show();
  window.addEventListener('load', function(){ setTimeout(show, 0); });
})();
</script>`

package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// bundles are the files applied together: objects in one bundle must
// agree with each other.
var bundles = [][]string{
	{"../statefulset.yaml", "../twemproxy.yaml"},
	{"../cluster.yaml"},
	{"../sentinel.yaml"},
	{"../../kubernetes.yaml"},
}

// externalSecrets are Secrets the manifests expect the user to create (the
// comments of deploy/kubernetes.yaml say how).
var externalSecrets = []string{"minikv-auth"}

// TestEveryManifestIsInABundle: a new manifest must be listed above, or it
// would go unchecked.
func TestEveryManifestIsInABundle(t *testing.T) {
	files, err := filepath.Glob("../*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../kubernetes.yaml")
	for _, f := range files {
		if !slices.ContainsFunc(bundles, func(b []string) bool { return slices.Contains(b, f) }) {
			t.Errorf("%s is in no bundle of validate_test.go", f)
		}
	}
}

func TestManifests(t *testing.T) {
	for _, files := range bundles {
		t.Run(strings.Join(files, "+"), func(t *testing.T) {
			b := &bundle{t: t}
			for _, f := range files {
				b.load(f)
			}
			b.check()
		})
	}
}

// TestStrictDecodingRejects shows the decoding is strict: the kinds of
// mistake a schema check exists for must fail.
func TestStrictDecodingRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":   "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {clusterIp: None}\n",
		"wrong type":      "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: eighty}]}\n",
		"duplicate field": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: \"1\", x: \"2\"}\n",
		"unknown kind":    "apiVersion: apps/v1\nkind: StatefulSets\nmetadata: {name: a}\n",
		"nested unknown":  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {spec: {containers: [{name: a, image: b, livenessProbe: {httpGet: {path: /, prot: 1}}}]}}}\n",
	} {
		if _, err := decode([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	if _, err := decode([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {clusterIP: None}\n")); err != nil {
		t.Errorf("a valid Service: %v", err)
	}
}

var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict)
}()

// decode decodes one YAML document strictly into its API type.
func decode(doc []byte) (runtime.Object, error) {
	obj, _, err := codecs.UniversalDeserializer().Decode(doc, nil, nil)
	return obj, err
}

// workload is a Deployment or StatefulSet, reduced to what the checks need.
type workload struct {
	kind, name string
	selector   *metav1.LabelSelector
	template   *corev1.PodTemplateSpec
	replicas   int
	sts        *appsv1.StatefulSet
}

type bundle struct {
	t          *testing.T
	workloads  []*workload
	services   []*corev1.Service
	configMaps map[string]*corev1.ConfigMap
	pdbs       []*policyv1.PodDisruptionBudget
	netpols    []*networkingv1.NetworkPolicy
	names      map[string]string // kind/name -> file
}

func (b *bundle) load(path string) {
	t := b.t
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b.configMaps == nil {
		b.configMaps = map[string]*corev1.ConfigMap{}
		b.names = map[string]string{}
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		n++
		obj, err := decode(doc)
		if err != nil {
			t.Errorf("%s, document %d: %v", path, n, err)
			continue
		}
		meta, ok := obj.(metav1.Object)
		if !ok {
			t.Errorf("%s, document %d: %T has no metadata", path, n, obj)
			continue
		}
		kind := fmt.Sprintf("%T", obj)
		key := kind + "/" + meta.GetName()
		if prev, dup := b.names[key]; dup {
			t.Errorf("%s: %s defined again (first in %s)", path, key, prev)
		}
		b.names[key] = path
		for _, msg := range validation.IsDNS1123Subdomain(meta.GetName()) {
			t.Errorf("%s: %s: name: %s", path, key, msg)
		}
		if meta.GetNamespace() != "" {
			t.Errorf("%s: %s sets a namespace; the manifests go wherever kubectl -n puts them", path, key)
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			b.workloads = append(b.workloads, &workload{kind: "Deployment", name: o.Name, selector: o.Spec.Selector,
				template: &o.Spec.Template, replicas: int(ptrOr(o.Spec.Replicas, 1))})
		case *appsv1.StatefulSet:
			b.workloads = append(b.workloads, &workload{kind: "StatefulSet", name: o.Name, selector: o.Spec.Selector,
				template: &o.Spec.Template, replicas: int(ptrOr(o.Spec.Replicas, 1)), sts: o})
		case *corev1.Service:
			for _, msg := range validation.IsDNS1035Label(o.Name) {
				t.Errorf("%s: Service %s: %s", path, o.Name, msg)
			}
			b.services = append(b.services, o)
		case *corev1.ConfigMap:
			b.configMaps[o.Name] = o
		case *policyv1.PodDisruptionBudget:
			b.pdbs = append(b.pdbs, o)
		case *networkingv1.NetworkPolicy:
			b.netpols = append(b.netpols, o)
		default:
			t.Errorf("%s: %s: no checks for this kind; add them", path, key)
		}
	}
	if n == 0 {
		t.Errorf("%s: no objects", path)
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func (b *bundle) check() {
	t := b.t
	for _, w := range b.workloads {
		b.checkWorkload(w)
	}
	// No two workloads' selectors may claim each other's pods.
	for i, a := range b.workloads {
		for _, c := range b.workloads[i+1:] {
			if matches(t, a.selector, c.template.Labels) || matches(t, c.selector, a.template.Labels) {
				t.Errorf("%s %s and %s %s select each other's pods", a.kind, a.name, c.kind, c.name)
			}
		}
	}
	for _, s := range b.services {
		b.checkService(s)
	}
	for _, p := range b.pdbs {
		if len(b.selected(p.Spec.Selector)) == 0 {
			t.Errorf("PodDisruptionBudget %s selects no workload", p.Name)
		}
		if p.Spec.MaxUnavailable == nil && p.Spec.MinAvailable == nil {
			t.Errorf("PodDisruptionBudget %s sets neither maxUnavailable nor minAvailable", p.Name)
		}
	}
	for _, np := range b.netpols {
		ws := b.selected(&np.Spec.PodSelector)
		if len(ws) == 0 {
			t.Errorf("NetworkPolicy %s selects no workload", np.Name)
		}
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				for _, w := range ws {
					if p.Port != nil && !hasPort(w.template, *p.Port) {
						t.Errorf("NetworkPolicy %s: port %s is no container port of %s", np.Name, p.Port.String(), w.name)
					}
				}
			}
			for _, peer := range rule.From {
				if peer.PodSelector == nil || len(peer.PodSelector.MatchLabels) == 0 {
					continue
				}
				if len(b.selected(peer.PodSelector)) == 0 && peer.PodSelector.MatchLabels["minikv-client"] == "" {
					t.Errorf("NetworkPolicy %s admits %v, which is no workload here and not the minikv-client label", np.Name, peer.PodSelector.MatchLabels)
				}
			}
		}
	}
	for name, cm := range b.configMaps {
		if !b.mounted(name) {
			t.Errorf("ConfigMap %s is mounted by no workload", name)
		}
		if conf, ok := cm.Data["nutcracker.yml"]; ok {
			b.checkTwemproxy(name, conf)
		}
		if conf, ok := cm.Data["cluster.conf"]; ok {
			b.checkCluster(name, conf)
		}
		if conf, ok := cm.Data["sentinel.conf"]; ok {
			b.checkSentinel(name, conf)
		}
	}
}

func matches(t *testing.T, sel *metav1.LabelSelector, lbls map[string]string) bool {
	t.Helper()
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Errorf("selector %v: %v", sel, err)
		return false
	}
	return !s.Empty() && s.Matches(labels.Set(lbls))
}

func (b *bundle) selected(sel *metav1.LabelSelector) []*workload {
	var out []*workload
	for _, w := range b.workloads {
		if matches(b.t, sel, w.template.Labels) {
			out = append(out, w)
		}
	}
	return out
}

func (b *bundle) checkWorkload(w *workload) {
	t := b.t
	id := w.kind + " " + w.name
	if !matches(t, w.selector, w.template.Labels) {
		t.Errorf("%s: selector %v does not match the pod template's labels %v", id, w.selector, w.template.Labels)
	}
	ps := &w.template.Spec
	if len(ps.Containers) == 0 {
		t.Errorf("%s: no containers", id)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		volumes[v.Name] = v
		switch {
		case v.ConfigMap != nil:
			cm := b.configMaps[v.ConfigMap.Name]
			if cm == nil {
				t.Errorf("%s: volume %s: no ConfigMap %s in these manifests", id, v.Name, v.ConfigMap.Name)
				continue
			}
			for _, it := range v.ConfigMap.Items {
				if _, ok := cm.Data[it.Key]; !ok {
					t.Errorf("%s: volume %s: ConfigMap %s has no key %s", id, v.Name, cm.Name, it.Key)
				}
			}
		case v.Secret != nil:
			if !slices.Contains(externalSecrets, v.Secret.SecretName) {
				t.Errorf("%s: volume %s: Secret %s is not one the docs tell users to create", id, v.Name, v.Secret.SecretName)
			}
		}
	}
	if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("%s: pods must run as non-root", id)
	}
	seen := map[string]bool{}
	for _, c := range ps.Containers {
		cid := id + " container " + c.Name
		if c.Name == "" || c.Image == "" || seen[c.Name] {
			t.Errorf("%s: needs a unique name and an image", cid)
		}
		seen[c.Name] = true
		ports := map[string]bool{}
		for _, p := range c.Ports {
			if p.Name != "" {
				for _, msg := range validation.IsValidPortName(p.Name) {
					t.Errorf("%s: port %s: %s", cid, p.Name, msg)
				}
				if ports[p.Name] {
					t.Errorf("%s: port name %s twice", cid, p.Name)
				}
				ports[p.Name] = true
			}
		}
		for _, e := range c.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				t.Errorf("%s: env %s: %s", cid, e.Name, msg)
			}
		}
		for name, pr := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			if pr == nil {
				t.Errorf("%s: no %s probe", cid, name)
				continue
			}
			var port *intstr.IntOrString
			switch {
			case pr.HTTPGet != nil:
				port = &pr.HTTPGet.Port
			case pr.TCPSocket != nil:
				port = &pr.TCPSocket.Port
			}
			if port != nil && !hasPort(w.template, *port) {
				t.Errorf("%s: %s probe port %s is no container port", cid, name, port.String())
			}
		}
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok {
				t.Errorf("%s: mounts volume %s, which the pod does not define", cid, m.Name)
			}
		}
		req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
		if lim.IsZero() {
			t.Errorf("%s: no memory limit", cid)
		} else if req.Cmp(*lim) > 0 {
			t.Errorf("%s: memory request %s above its limit %s", cid, req, lim)
		}
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: root filesystem should be read-only", cid)
		}
	}
	if w.sts != nil {
		svc := b.service(w.sts.Spec.ServiceName)
		switch {
		case svc == nil:
			t.Errorf("%s: serviceName %q is no Service in these manifests", id, w.sts.Spec.ServiceName)
		case svc.Spec.ClusterIP != corev1.ClusterIPNone:
			t.Errorf("%s: its Service %s must be headless (clusterIP: None) for per-pod DNS names", id, svc.Name)
		case !matches(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, w.template.Labels):
			t.Errorf("%s: its Service %s does not select its pods", id, svc.Name)
		}
	}
}

func (b *bundle) service(name string) *corev1.Service {
	for _, s := range b.services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// hasPort: is p (a number or a name) a container port of the pod?
func hasPort(tpl *corev1.PodTemplateSpec, p intstr.IntOrString) bool {
	for _, c := range tpl.Spec.Containers {
		for _, cp := range c.Ports {
			if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
				return true
			}
		}
	}
	return false
}

// containerPort returns the number of the named port.
func containerPort(tpl *corev1.PodTemplateSpec, name string) int32 {
	for _, c := range tpl.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == name {
				return cp.ContainerPort
			}
		}
	}
	return 0
}

func (b *bundle) checkService(s *corev1.Service) {
	t := b.t
	ws := b.selected(&metav1.LabelSelector{MatchLabels: s.Spec.Selector})
	if len(ws) != 1 {
		t.Errorf("Service %s selects %d workloads, want 1", s.Name, len(ws))
		return
	}
	if len(s.Spec.Ports) == 0 {
		t.Errorf("Service %s has no ports", s.Name)
	}
	for _, p := range s.Spec.Ports {
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		if !hasPort(ws[0].template, target) {
			t.Errorf("Service %s: port %s targets %s, no container port of %s", s.Name, p.Name, target.String(), ws[0].name)
		}
	}
}

func (b *bundle) mounted(cm string) bool {
	for _, w := range b.workloads {
		for _, v := range w.template.Spec.Volumes {
			if v.ConfigMap != nil && v.ConfigMap.Name == cm {
				return true
			}
		}
	}
	return false
}

// statefulPod resolves "<pod>.<service>" to its StatefulSet and ordinal.
func (b *bundle) statefulPod(host string) (*workload, int, error) {
	pod, svc, ok := strings.Cut(host, ".")
	if !ok {
		return nil, 0, fmt.Errorf("%q is not <pod>.<service>", host)
	}
	for _, w := range b.workloads {
		if w.sts == nil || w.sts.Spec.ServiceName != svc {
			continue
		}
		n, ok := strings.CutPrefix(pod, w.name+"-")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= w.replicas {
			return nil, 0, fmt.Errorf("%q: StatefulSet %s has no pod %s (replicas %d)", host, w.name, pod, w.replicas)
		}
		return w, i, nil
	}
	return nil, 0, fmt.Errorf("%q names no pod of a StatefulSet behind Service %s", host, svc)
}

// nutcrackerServer is a twemproxy server line: "host:port:weight name".
var nutcrackerServer = regexp.MustCompile(`^([^:\s]+):(\d+):(\d+) (\S+)$`)

// checkTwemproxy checks the embedded nutcracker.yml: nutcracker accepts it,
// every pool lists each pod of one StatefulSet once, by its DNS name, on a
// port that pod serves, named after the pod, and twemproxy's container
// serves each pool's listen port.
func (b *bundle) checkTwemproxy(cmName, conf string) {
	t := b.t
	var pools map[string]struct {
		Listen       string   `json:"listen"`
		Hash         string   `json:"hash"`
		Distribution string   `json:"distribution"`
		Redis        bool     `json:"redis"`
		AutoEject    bool     `json:"auto_eject_hosts"`
		Servers      []string `json:"servers"`
		Timeout      int      `json:"timeout"`
		Backlog      int      `json:"backlog"`
		Preconnect   bool     `json:"preconnect"`
		RetryTimeout int      `json:"server_retry_timeout"`
		FailureLimit int      `json:"server_failure_limit"`
	}
	if err := yaml.UnmarshalStrict([]byte(conf), &pools); err != nil {
		t.Errorf("ConfigMap %s: nutcracker.yml: %v", cmName, err)
		return
	}
	var proxy *workload
	for _, w := range b.workloads {
		for _, v := range w.template.Spec.Volumes {
			if v.ConfigMap != nil && v.ConfigMap.Name == cmName {
				proxy = w
			}
		}
	}
	for name, p := range pools {
		id := fmt.Sprintf("ConfigMap %s: pool %s", cmName, name)
		_, lport, _ := strings.Cut(p.Listen, ":")
		if n, err := strconv.Atoi(lport); err != nil || proxy == nil || !hasPort(proxy.template, intstr.FromInt(n)) {
			t.Errorf("%s: listen %s is no container port of the proxy", id, p.Listen)
		}
		if p.Distribution != "ketama" || p.Hash == "" {
			t.Errorf("%s: want distribution ketama with a hash, got %q/%q", id, p.Distribution, p.Hash)
		}
		portName := "memcached"
		if p.Redis {
			portName = "redis"
		}
		var sts *workload
		seen := map[int]bool{}
		for _, s := range p.Servers {
			m := nutcrackerServer.FindStringSubmatch(s)
			if m == nil {
				t.Errorf("%s: server %q is not host:port:weight name", id, s)
				continue
			}
			w, i, err := b.statefulPod(m[1])
			if err != nil {
				t.Errorf("%s: server %q: %v", id, s, err)
				continue
			}
			if sts != nil && sts != w {
				t.Errorf("%s: servers from two StatefulSets", id)
			}
			sts = w
			if port, _ := strconv.Atoi(m[2]); int32(port) != containerPort(w.template, portName) {
				t.Errorf("%s: server %q: port %s is not %s's %s port", id, s, m[2], w.name, portName)
			}
			if want := fmt.Sprintf("%s-%d", w.name, i); m[4] != want {
				t.Errorf("%s: server %q: name %s, want the pod name %s", id, s, m[4], want)
			}
			if seen[i] {
				t.Errorf("%s: pod %d listed twice", id, i)
			}
			seen[i] = true
		}
		if sts != nil && len(seen) != sts.replicas {
			t.Errorf("%s: %d servers for %d replicas of %s", id, len(seen), sts.replicas, sts.name)
		}
	}
	// nutcracker's own check of the file, when it is installed.
	bin, err := exec.LookPath("nutcracker")
	if err != nil {
		bin, err = exec.LookPath("/usr/sbin/nutcracker")
	}
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
			t.Errorf("nutcracker not installed and MINIKV_REQUIRE_PEERS=1")
		} else {
			t.Logf("nutcracker not installed: skipping its check of %s", cmName)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-t", "-c", path).CombinedOutput(); err != nil {
		t.Errorf("ConfigMap %s: nutcracker -t: %v\n%s", cmName, err, out)
	}
}

// checkCluster checks the embedded cluster.conf: each line "node-id
// host:port slots..." or "node-id host:port replicaof primary-id", node
// ids the pods of the StatefulSet that mounts the file (which points
// --cluster-config at it), addresses those pods' DNS names on their Redis
// port, each replica's primary a slot-owning line of the file, and the
// slot ranges covering 0-16383 exactly once.
func (b *bundle) checkCluster(cmName, conf string) {
	t := b.t
	var owner *workload
	var path string
	for _, w := range b.workloads {
		for _, v := range w.template.Spec.Volumes {
			if v.ConfigMap == nil || v.ConfigMap.Name != cmName {
				continue
			}
			owner = w
			for _, c := range w.template.Spec.Containers {
				for _, m := range c.VolumeMounts {
					if m.Name == v.Name {
						path = m.MountPath + "/cluster.conf"
					}
				}
			}
		}
	}
	if owner == nil || owner.sts == nil {
		t.Errorf("ConfigMap %s: mounted by no StatefulSet", cmName)
		return
	}
	if !slices.Contains(owner.template.Spec.Containers[0].Args, "--cluster-config="+path) {
		t.Errorf("StatefulSet %s: args %v lack --cluster-config=%s", owner.name, owner.template.Spec.Containers[0].Args, path)
	}
	// The pods listen on 0.0.0.0, which is no address of the file: each
	// names its own line, the pod name, through the downward API.
	named := false
	for _, e := range owner.template.Spec.Containers[0].Env {
		if e.Name == "MINIKV_CLUSTER_NODE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			named = true
		}
	}
	if !named {
		t.Errorf("StatefulSet %s: no MINIKV_CLUSTER_NODE from metadata.name: a node would not find its line in cluster.conf", owner.name)
	}
	var slots [16384]int
	nodes := map[string]bool{}
	replicaOf := map[string]string{}
	for n, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Errorf("cluster.conf line %d: %q: want node-id host:port slots", n+1, line)
			continue
		}
		host, port, _ := strings.Cut(f[1], ":")
		w, i, err := b.statefulPod(host)
		if err != nil || w != owner {
			t.Errorf("cluster.conf line %d: %s is no pod of %s: %v", n+1, f[1], owner.name, err)
			continue
		}
		if want := fmt.Sprintf("%s-%d", w.name, i); f[0] != want {
			t.Errorf("cluster.conf line %d: node id %s, want the pod name %s", n+1, f[0], want)
		}
		nodes[f[0]] = true
		if p, _ := strconv.Atoi(port); int32(p) != containerPort(w.template, "redis") {
			t.Errorf("cluster.conf line %d: port %s is not the Redis port", n+1, port)
		}
		if f[2] == "replicaof" {
			if len(f) != 4 {
				t.Errorf("cluster.conf line %d: %q: want node-id host:port replicaof primary-id", n+1, line)
			} else {
				replicaOf[f[0]] = f[3]
			}
			continue
		}
		for _, r := range f[2:] {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			z, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || z >= len(slots) || a > z {
				t.Errorf("cluster.conf line %d: bad slot range %q", n+1, r)
				continue
			}
			for s := a; s <= z; s++ {
				slots[s]++
			}
		}
	}
	if len(nodes) != owner.replicas {
		t.Errorf("cluster.conf lists %d nodes, StatefulSet %s has %d replicas", len(nodes), owner.name, owner.replicas)
	}
	for r, p := range replicaOf {
		if _, isReplica := replicaOf[p]; !nodes[p] || isReplica {
			t.Errorf("cluster.conf: %s is a replica of %s, which is no primary of the file", r, p)
		}
	}
	for s, c := range slots {
		if c != 1 {
			t.Errorf("cluster.conf: slot %d is owned %d times (each of 0-16383 must be owned once)", s, c)
			break
		}
	}
}

// checkSentinel checks the embedded sentinel.conf and the init containers
// that start from it: the Sentinels' port is their container port; the
// master they monitor is pod 0 of a StatefulSet in the bundle, on its
// Redis port, with a quorum that is a majority of the Sentinel pods; the
// MiniKV pods' init container names that pod as FIRST_PRIMARY, and every
// init container the same master name and the Sentinels' Service on their
// port; and the MiniKV container reads the --config the init container
// writes.
func (b *bundle) checkSentinel(cmName, conf string) {
	t := b.t
	var sentinel *workload
	for _, w := range b.workloads {
		for _, v := range w.template.Spec.Volumes {
			if v.ConfigMap != nil && v.ConfigMap.Name == cmName && slices.ContainsFunc(v.ConfigMap.Items, func(it corev1.KeyToPath) bool { return it.Key == "sentinel.conf" }) {
				sentinel = w
			}
		}
	}
	if sentinel == nil || sentinel.sts == nil {
		t.Errorf("ConfigMap %s: sentinel.conf mounted by no StatefulSet", cmName)
		return
	}
	var name, monitored string
	var quorum int
	for line := range strings.SplitSeq(conf, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "port":
			if p, _ := strconv.Atoi(f[1]); int32(p) != containerPort(sentinel.template, "sentinel") {
				t.Errorf("sentinel.conf: port %s is not StatefulSet %s's sentinel port", f[1], sentinel.name)
			}
		case len(f) == 6 && f[0] == "sentinel" && f[1] == "monitor":
			name, monitored = f[2], f[3]+":"+f[4]
			quorum, _ = strconv.Atoi(f[5])
			w, i, err := b.statefulPod(f[3])
			if err != nil || i != 0 {
				t.Errorf("sentinel.conf: monitors %s, which is not pod 0 of a StatefulSet here: %v", f[3], err)
				continue
			}
			if p, _ := strconv.Atoi(f[4]); int32(p) != containerPort(w.template, "redis") {
				t.Errorf("sentinel.conf: port %s is not %s's Redis port", f[4], w.name)
			}
		case len(f) == 4 && f[0] == "sentinel" && f[1] == "monitor":
			t.Errorf("sentinel.conf: %q: want sentinel monitor NAME HOST PORT QUORUM", line)
		}
	}
	if name == "" {
		t.Errorf("sentinel.conf: no sentinel monitor line")
		return
	}
	if quorum <= sentinel.replicas/2 || quorum > sentinel.replicas {
		t.Errorf("sentinel.conf: quorum %d of %d Sentinels is not a majority", quorum, sentinel.replicas)
	}
	svc := b.service(sentinel.sts.Spec.ServiceName)
	wantService := fmt.Sprintf("%s:%d", sentinel.sts.Spec.ServiceName, containerPort(sentinel.template, "sentinel"))
	inits := 0
	for _, w := range b.workloads {
		for _, c := range w.template.Spec.InitContainers {
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			if _, ok := env["SENTINEL_SERVICE"]; !ok {
				continue
			}
			inits++
			id := fmt.Sprintf("%s %s init container %s", w.kind, w.name, c.Name)
			if env["MASTER_NAME"] != name {
				t.Errorf("%s: MASTER_NAME %q, sentinel.conf monitors %q", id, env["MASTER_NAME"], name)
			}
			if env["SENTINEL_SERVICE"] != wantService || svc == nil {
				t.Errorf("%s: SENTINEL_SERVICE %q, want the Sentinels' Service %s", id, env["SENTINEL_SERVICE"], wantService)
			}
			if w == sentinel {
				continue
			}
			if env["FIRST_PRIMARY"] != monitored {
				t.Errorf("%s: FIRST_PRIMARY %q, sentinel.conf monitors %s", id, env["FIRST_PRIMARY"], monitored)
			}
			// The role file it writes is the MiniKV container's --config.
			var roleDir string
			for _, m := range c.VolumeMounts {
				if m.MountPath == "/etc/minikv-role" {
					roleDir = m.Name
				}
			}
			found := false
			for _, mc := range w.template.Spec.Containers {
				for _, m := range mc.VolumeMounts {
					if m.Name == roleDir && slices.Contains(mc.Args, "--config="+m.MountPath+"/minikv.conf") {
						found = true
					}
				}
			}
			if roleDir == "" || !found {
				t.Errorf("%s: its /etc/minikv-role/minikv.conf is no container's --config", id)
			}
		}
	}
	if inits != 2 {
		t.Errorf("%d init containers ask the Sentinels, want 2 (the MiniKV pods' and the Sentinels')", inits)
	}
}

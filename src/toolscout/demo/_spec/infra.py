"""Cloud, containers, databases, monitoring and on-call."""

from __future__ import annotations

from . import Service, a, b, e, i, n, o, s, t

LIMIT = i("Maximum number of results to return.", minimum=1, maximum=1000, default=50)
BUCKET = s("Bucket name.", pattern="^[a-z0-9.-]{3,63}$")
REGION = s("AWS region, e.g. eu-west-1; the configured default when omitted.")
NAMESPACE = s("Kubernetes namespace.", default="default")
INSTANCE = s("Instance ID, e.g. i-0abc123def4567890.", pattern="^i-[0-9a-f]{8,17}$")

S3 = Service("s3", "AWS S3", ("aws", "object storage", "files", "cloud"), [
    t("list_buckets", "List the S3 buckets of the account with their regions and creation dates.", tags=("storage",)),
    t("list_objects", "List objects in a bucket under a key prefix.", {
        "bucket": BUCKET,
        "prefix?": s("Key prefix, e.g. logs/2025/."),
        "max_keys?": LIMIT,
    }, tags=("browse", "ls")),
    t("get_object", "Read an object's content as text (small text objects only).", {
        "bucket": BUCKET, "key": s("Object key."),
    }, tags=("download", "read")),
    t("put_object", "Write text content to an object key, replacing any existing object.", {
        "bucket": BUCKET, "key": s("Object key."),
        "content": s("Object content."),
        "content_type?": s("MIME type.", default="text/plain"),
    }, "write", tags=("upload",)),
    t("delete_object", "Delete an object (or mark it deleted in a versioned bucket).", {
        "bucket": BUCKET, "key": s("Object key."),
    }, "delete"),
    t("copy_object", "Copy an object to another key or bucket.", {
        "source_bucket": BUCKET, "source_key": s("Key to copy."),
        "dest_bucket": s("Destination bucket."), "dest_key": s("Destination key."),
    }, "write", tags=("duplicate",)),
    t("presign_url", "Create a time-limited URL that lets anyone download (or upload) one object.", {
        "bucket": BUCKET, "key": s("Object key."),
        "expires_in": i("Validity in seconds.", minimum=60, maximum=604800, default=3600),
        "method?": e("Allowed HTTP method.", "GET", "PUT", default="GET"),
    }, "write", tags=("share", "link")),
    t("create_bucket", "Create a bucket in a region, private by default.", {
        "bucket": BUCKET, "region?": REGION,
    }, "write"),
    t("get_bucket_size", "Report a bucket's object count and total size in bytes.", {
        "bucket": BUCKET,
    }, tags=("usage", "cost")),
    t("set_lifecycle_rule", "Add a lifecycle rule that expires or archives objects under a prefix after N days.", {
        "bucket": BUCKET,
        "prefix": s("Key prefix the rule applies to."),
        "days": i("Age in days.", minimum=1),
        "action": e("What happens.", "expire", "glacier", "intelligent_tiering"),
    }, "update", tags=("retention", "archive")),
])

EC2 = Service("ec2", "AWS EC2", ("aws", "servers", "virtual machines", "cloud", "compute"), [
    t("describe_instances", "List EC2 instances with state, type, IPs and Name tag, optionally filtered.", {
        "state?": e("Only instances in this state.", "pending", "running", "stopping", "stopped", "terminated"),
        "name_tag?": s("Only instances whose Name tag contains this text."),
        "region?": REGION,
    }, tags=("list", "vm")),
    t("start_instances", "Start stopped instances.", {
        "instance_ids": a("Instance IDs.", {"type": "string", "pattern": "^i-[0-9a-f]{8,17}$"}, minItems=1),
    }, "update", tags=("power on",)),
    t("stop_instances", "Stop running instances (EBS volumes are kept).", {
        "instance_ids": a("Instance IDs.", {"type": "string", "pattern": "^i-[0-9a-f]{8,17}$"}, minItems=1),
        "force?": b("Force stop without a clean shutdown.", default=False),
    }, "update", tags=("power off", "shutdown")),
    t("reboot_instance", "Reboot an instance, as with a restart from the console; its data and IP addresses are kept.", {"instance_id": INSTANCE}, "update", tags=("restart",)),
    t("terminate_instances", "Terminate instances permanently; their root volumes are deleted.", {
        "instance_ids": a("Instance IDs.", {"type": "string", "pattern": "^i-[0-9a-f]{8,17}$"}, minItems=1),
    }, "danger", tags=("destroy", "delete")),
    t("run_instance", "Launch a new instance from an AMI with a type, key pair and security groups.", {
        "image_id": s("AMI ID, e.g. ami-0abcdef1234567890."),
        "instance_type": s("Instance type, e.g. t3.micro."),
        "key_name?": s("SSH key pair name."),
        "security_group_ids?": a("Security group IDs."),
        "name?": s("Value of the Name tag."),
    }, "write", tags=("launch", "create vm")),
    t("create_snapshot", "Snapshot an EBS volume for backup.", {
        "volume_id": s("Volume ID, vol-..."),
        "description?": s("Snapshot description."),
    }, "write", tags=("backup", "ebs")),
    t("get_console_output", "Fetch an instance's serial console output, to debug boot problems.", {
        "instance_id": INSTANCE,
    }, tags=("debug", "boot log")),
    t("authorize_security_group_ingress", "Open an inbound port range on a security group for a CIDR block.", {
        "group_id": s("Security group ID, sg-..."),
        "protocol": e("IP protocol.", "tcp", "udp", "icmp"),
        "from_port": i("First port.", minimum=0, maximum=65535),
        "to_port": i("Last port.", minimum=0, maximum=65535),
        "cidr": s("Source CIDR, e.g. 10.0.0.0/16."),
    }, "danger", tags=("firewall", "network")),
    t("get_cost_and_usage", "Report EC2 spend by instance type for a month.", {
        "month": s("Month as YYYY-MM.", pattern="^\\d{4}-\\d{2}$"),
    }, tags=("billing", "cost")),
])

K8S = Service("k8s", "Kubernetes", ("kubernetes", "containers", "cluster", "devops"), category="kubernetes", tools=[
    t("get_pods", "List pods in a namespace with status, restarts, age and node, like kubectl get pods.", {
        "namespace?": NAMESPACE,
        "label_selector?": s("Label selector, e.g. app=api,tier=web."),
    }, tags=("kubectl", "list")),
    t("describe_pod", "Describe a pod: containers, events, conditions and recent failures.", {
        "name": s("Pod name."), "namespace?": NAMESPACE,
    }, tags=("debug", "events")),
    t("get_pod_logs", "Fetch the logs of a pod's container, optionally of the previous crashed instance.", {
        "name": s("Pod name."), "namespace?": NAMESPACE,
        "container?": s("Container name when the pod has several."),
        "tail_lines?": i("Only the last N lines.", minimum=1, default=200),
        "previous?": b("Logs of the previous (crashed) container.", default=False),
    }, tags=("logs", "debug", "crashloop")),
    t("list_deployments", "List deployments with ready, up-to-date and available replica counts.", {
        "namespace?": NAMESPACE,
    }),
    t("scale_deployment", "Set the number of replicas of a deployment.", {
        "name": s("Deployment name."), "namespace?": NAMESPACE,
        "replicas": i("Desired replicas.", minimum=0, maximum=500),
    }, "update", tags=("autoscale", "replicas")),
    t("restart_deployment", "Roll a deployment's pods one by one, like kubectl rollout restart.", {
        "name": s("Deployment name."), "namespace?": NAMESPACE,
    }, "exec", tags=("rollout", "restart")),
    t("rollback_deployment", "Roll a deployment back to its previous revision.", {
        "name": s("Deployment name."), "namespace?": NAMESPACE,
        "to_revision?": i("Revision number; the previous one when omitted.", minimum=1),
    }, "update", tags=("rollout", "undo", "revert")),
    t("set_image", "Update a deployment's container image, which starts a rolling update.", {
        "name": s("Deployment name."), "namespace?": NAMESPACE,
        "container": s("Container name."),
        "image": s("New image reference, e.g. registry.example.com/api:1.8.2."),
    }, "update", tags=("deploy", "release")),
    t("apply_manifest", "Apply a YAML manifest to the cluster, creating or updating the objects it declares.", {
        "manifest": s("One or more YAML documents."),
        "namespace?": NAMESPACE,
        "dry_run?": b("Validate on the server without persisting.", default=False),
    }, "danger", tags=("kubectl apply", "yaml")),
    t("delete_pod", "Delete a pod; its controller will create a replacement.", {
        "name": s("Pod name."), "namespace?": NAMESPACE,
    }, "delete"),
    t("get_events", "List recent cluster events, warnings first, to see what went wrong.", {
        "namespace?": NAMESPACE,
        "warnings_only?": b("Only Warning events.", default=True),
    }, tags=("debug", "warnings")),
    t("top_pods", "Show CPU and memory usage per pod, like kubectl top pods.", {
        "namespace?": NAMESPACE,
        "sort_by?": e("Sort column.", "cpu", "memory", default="cpu"),
    }, tags=("metrics", "resources")),
    t("exec_in_pod", "Run a command inside a pod's container and return its output.", {
        "name": s("Pod name."), "namespace?": NAMESPACE,
        "command": a("Command and arguments, e.g. [\"ls\", \"-la\", \"/app\"].", minItems=1),
    }, "danger", tags=("shell", "kubectl exec")),
])

DOCKER = Service("docker", "Docker", ("containers", "images", "devops"), [
    t("list_containers", "List containers with image, status, ports and names.", {
        "all?": b("Include stopped containers.", default=False),
    }, tags=("ps",)),
    t("run_container", "Start a new container from an image with ports, environment and volumes.", {
        "image": s("Image reference, e.g. postgres:16."),
        "name?": s("Container name."),
        "ports?": o("Port map host->container, e.g. {\"8080\": \"80\"}."),
        "env?": o("Environment variables."),
        "detach?": b("Run in the background.", default=True),
    }, "exec", tags=("start",)),
    t("stop_container", "Stop a running container.", {
        "container": s("Container name or ID."),
        "timeout_seconds?": i("Seconds to wait before killing it.", minimum=0, default=10),
    }, "update"),
    t("remove_container", "Remove a stopped container.", {
        "container": s("Container name or ID."),
        "force?": b("Also remove a running container.", default=False),
    }, "delete"),
    t("container_logs", "Fetch a container's stdout and stderr logs.", {
        "container": s("Container name or ID."),
        "tail?": i("Only the last N lines.", minimum=1, default=100),
        "since?": s("Only logs since, e.g. 10m or an RFC 3339 time."),
    }, tags=("logs", "debug")),
    t("list_images", "List local images with tags and sizes.", tags=("images",)),
    t("pull_image", "Pull an image from a registry.", {
        "image": s("Image reference."),
    }, "net", tags=("download",)),
    t("build_image", "Build an image from a directory with a Dockerfile.", {
        "context_path": s("Build context directory."),
        "tag": s("Tag for the built image."),
        "dockerfile?": s("Dockerfile path relative to the context.", default="Dockerfile"),
    }, "exec", tags=("dockerfile",)),
    t("exec_command", "Run a command in a running container and return its output.", {
        "container": s("Container name or ID."),
        "command": a("Command and arguments.", minItems=1),
    }, "danger", tags=("shell",)),
    t("container_stats", "One snapshot of CPU, memory, network and disk usage per container.", tags=("metrics",)),
])

POSTGRES = Service("postgres", "PostgreSQL", ("database", "sql", "postgresql"), [
    t("query", "Run a read-only SQL query and return rows as JSON (a row limit applies).", {
        "sql": s("A SELECT or WITH statement."),
        "params?": a("Values for $1, $2... placeholders.", {}),
        "max_rows?": LIMIT,
    }, tags=("select", "read")),
    t("execute", "Run a data-changing SQL statement (INSERT, UPDATE, DELETE) in a transaction.", {
        "sql": s("The statement."),
        "params?": a("Values for $1, $2... placeholders.", {}),
    }, "danger", tags=("insert", "update", "write")),
    t("list_tables", "List tables of a schema with their estimated row counts and sizes.", {
        "schema?": s("Schema name.", default="public"),
    }, tags=("schema",)),
    t("describe_table", "Show a table's columns, types, defaults, indexes and foreign keys.", {
        "table": s("Table name, optionally schema-qualified."),
    }, tags=("schema", "columns")),
    t("explain_query", "Show the query plan of a statement, optionally with actual timings (EXPLAIN ANALYZE).", {
        "sql": s("The statement to explain."),
        "analyze?": b("Run it to collect actual timings.", default=False),
    }, tags=("performance", "slow query")),
    t("list_slow_queries", "List the slowest statements by total time from pg_stat_statements.", {
        "limit?": LIMIT,
    }, tags=("performance",)),
    t("active_connections", "Show current connections and what they are running, longest first.", tags=("locks", "sessions")),
    t("create_index", "Create an index concurrently, without locking writes.", {
        "table": s("Table name."),
        "columns": a("Columns in index order.", minItems=1),
        "unique?": b("Unique index.", default=False),
    }, "write", tags=("performance",)),
    t("backup_database", "Start a logical backup (pg_dump) of a database to the configured backup bucket.", {
        "database": s("Database name."),
    }, "exec", tags=("dump", "backup")),
])

DATADOG = Service("datadog", "Datadog", ("monitoring", "observability", "metrics", "apm"), [
    t("query_metrics", "Query a metric time series, e.g. avg:system.cpu.user{service:api} over a window.", {
        "query": s("Metric query."),
        "from_time": s("Window start, ISO 8601 or relative such as now-1h."),
        "to_time?": s("Window end.", default="now"),
    }, tags=("timeseries", "graph", "cpu")),
    t("search_logs", "Search logs with Datadog query syntax, e.g. 'service:api status:error'.", {
        "query": s("Log search query."),
        "from_time?": s("Window start.", default="now-15m"),
        "limit?": LIMIT,
    }, tags=("logs", "errors")),
    t("list_monitors", "List monitors with their current state, optionally only those alerting.", {
        "state?": e("Only monitors in this state.", "Alert", "Warn", "No Data", "OK"),
        "tags?": a("Only monitors with these tags."),
    }, tags=("alerts",)),
    t("mute_monitor", "Silence a monitor for a while, e.g. during maintenance.", {
        "monitor_id": i("Monitor ID."),
        "end?": s("When the mute ends, ISO 8601.", format="date-time"),
        "scope?": s("Mute only this scope, e.g. host:web-1."),
    }, "update", tags=("silence", "maintenance")),
    t("create_monitor", "Create a metric monitor with warning and critical thresholds and a notification message.", {
        "name": s("Monitor name."),
        "query": s("Monitor query, e.g. avg(last_5m):avg:system.load.1{*} > 4."),
        "message": s("Notification text; may mention @slack-channel or @pagerduty."),
        "critical": n("Critical threshold."),
        "warning?": n("Warning threshold."),
    }, "write", tags=("alert",)),
    t("get_service_health", "Summarise an APM service: request rate, error rate and p95 latency.", {
        "service": s("Service name."),
        "env?": s("Environment.", default="prod"),
    }, tags=("latency", "error rate", "slo")),
    t("list_incidents", "List recent incidents with severity and status.", {
        "status?": e("Incident status.", "active", "stable", "resolved"),
    }, tags=("outage",)),
    t("post_event", "Post an event to the event stream, e.g. a deploy marker.", {
        "title": s("Event title."),
        "text": s("Event body."),
        "tags?": a("Event tags."),
        "alert_type?": e("Severity.", "info", "warning", "error", "success", default="info"),
    }, "write", tags=("deploy marker", "annotation")),
    t("get_dashboard", "Fetch a dashboard's widgets and their queries.", {
        "dashboard_id": s("Dashboard ID."),
    }),
])

PAGERDUTY = Service("pagerduty", "PagerDuty", ("incidents", "on-call", "alerting"), [
    t("trigger_incident", "Page the on-call responder of a service by opening an incident.", {
        "service_id": s("Service ID."),
        "title": s("What is wrong."),
        "urgency?": e("Urgency.", "high", "low", default="high"),
        "details?": s("Extra context for the responder."),
    }, "write", tags=("page", "alert", "outage"), zh=("触发告警", "为某个服务创建事件并呼叫值班人员。")),
    t("acknowledge_incident", "Acknowledge an incident so escalation stops.", {
        "incident_id": s("Incident ID."),
    }, "update", tags=("ack",)),
    t("resolve_incident", "Resolve an incident with a resolution note.", {
        "incident_id": s("Incident ID."),
        "resolution?": s("What fixed it."),
    }, "update", tags=("close",)),
    t("list_incidents", "List open incidents, newest first, with service and assignee.", {
        "statuses?": a("Statuses to include.", {"type": "string", "enum": ["triggered", "acknowledged", "resolved"]}),
        "limit?": LIMIT,
    }),
    t("who_is_on_call", "Show who is on call now for a schedule or escalation policy.", {
        "schedule_id?": s("Schedule ID; every schedule when omitted."),
    }, tags=("rota", "schedule")),
    t("add_incident_note", "Add a timeline note to an incident.", {
        "incident_id": s("Incident ID."), "note": s("Note text."),
    }, "write"),
    t("create_override", "Put someone on call in place of the scheduled person for a time window.", {
        "schedule_id": s("Schedule ID."),
        "user_email": s("Who takes the shift.", format="email"),
        "start": s("Start.", format="date-time"),
        "end": s("End.", format="date-time"),
    }, "write", tags=("swap shift",)),
    t("create_maintenance_window", "Suppress incidents for services during planned maintenance.", {
        "service_ids": a("Service IDs.", minItems=1),
        "start": s("Start.", format="date-time"),
        "end": s("End.", format="date-time"),
        "description?": s("Why."),
    }, "write", tags=("maintenance", "silence")),
])

SERVICES = [S3, EC2, K8S, DOCKER, POSTGRES, DATADOG, PAGERDUTY]

import { sgOpenDetector } from './sg-open';
import { coversPort } from './shared';

/**
 * S1 — SSH open to the Internet: an ingress rule from 0.0.0.0/0 or ::/0 with protocol -1, or TCP with
 * from_port <= 22 <= to_port (containment: a 20–25 or 0–1024 range counts, a rule that merely starts
 * at 23 does not). TCP only: SSH has no UDP transport, and Prowler's check is
 * `ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_22`. Only in-use groups (attached to a
 * live instance), and not groups the all-ports check already reports, as Prowler does.
 * (steampipe-mod-aws-compliance `vpc_security_group_restrict_ingress_ssh_all`; Checkov `CKV_AWS_24`)
 */
export const sgSshOpen = sgOpenDetector({
  id: 'security.sg_ssh_open',
  title: 'Security groups open to the Internet on SSH (22)',
  what: 'SSH (tcp/22)',
  match: coversPort(22, ['tcp']),
  matchText: 'protocol -1, or tcp with from_port <= 22 <= to_port',
  skipAllPorts: true,
  risk: 'Internet-wide SSH scanning finds such hosts within minutes; a leaked key, a weak password or an sshd vulnerability is then enough to get a shell.',
  fix: 'Replace the 0.0.0.0/0 / ::/0 source with the administrators’ VPN or office CIDR, or remove the rule and reach the hosts through SSM Session Manager or EC2 Instance Connect Endpoint.',
});

#!/usr/bin/env python3
"""Prepare a fresh moto server for fencekit's tests, then turn IAM
authentication on (from then on every request must carry a valid SigV4
signature from a known key, and a user may do only what its policy allows).

usage: moto_setup.py ENDPOINT [--ca-bundle PEM]

Creates, with boto3 (the venv's), and prints as one JSON object:
  admin     keys of a user allowed everything (tests create instances with it)
  fencer    keys of a user allowed only what fencing needs
            (ec2:DescribeInstances, ec2:StopInstances, ec2:StartInstances,
            ec2:DescribeInstanceStatus)
  readonly  keys of a user allowed only ec2:DescribeInstances
  sts       keys of a user allowed sts:AssumeRoleWithWebIdentity (moto with
            authentication on wants every request signed, even this one,
            which AWS takes unsigned: ec2_proxy.py --sign-sts signs it)
  role_arn  a role a web identity may assume, with the fencer's permissions
  image_id  an image ID to start instances from
"""
import json, sys, urllib.request

import boto3

endpoint = sys.argv[1]
verify = True
if '--ca-bundle' in sys.argv:
    verify = sys.argv[sys.argv.index('--ca-bundle') + 1]
kw = dict(region_name='us-east-1', endpoint_url=endpoint, verify=verify,
          aws_access_key_id='AKIDSETUP', aws_secret_access_key='setup')
iam = boto3.client('iam', **kw)
FENCE = ['ec2:DescribeInstances', 'ec2:StopInstances', 'ec2:StartInstances',
         'ec2:DescribeInstanceStatus']


def user(name, actions):
    iam.create_user(UserName=name)
    doc = {'Version': '2012-10-17',
           'Statement': [{'Effect': 'Allow', 'Action': actions, 'Resource': '*'}]}
    iam.put_user_policy(UserName=name, PolicyName='p', PolicyDocument=json.dumps(doc))
    k = iam.create_access_key(UserName=name)['AccessKey']
    return {'id': k['AccessKeyId'], 'secret': k['SecretAccessKey']}


out = {
    'admin': user('admin', ['*']),
    'fencer': user('fencer', FENCE),
    'readonly': user('readonly', ['ec2:DescribeInstances']),
    'sts': user('sts-signer', ['sts:AssumeRoleWithWebIdentity']),
}
trust = {'Version': '2012-10-17', 'Statement': [{
    'Effect': 'Allow', 'Action': 'sts:AssumeRoleWithWebIdentity',
    'Principal': {'Federated': 'arn:aws:iam::123456789012:oidc-provider/oidc.example'}}]}
role = iam.create_role(RoleName='fencer-role', AssumeRolePolicyDocument=json.dumps(trust))
iam.put_role_policy(RoleName='fencer-role', PolicyName='p', PolicyDocument=json.dumps({
    'Version': '2012-10-17',
    'Statement': [{'Effect': 'Allow', 'Action': FENCE, 'Resource': '*'}]}))
out['role_arn'] = role['Role']['Arn']
# moto_start.sh turns moto's default AMIs off (loading them takes seconds);
# moto starts instances from any image ID.
out['image_id'] = 'ami-0123456789abcdef0'
# The first instance of a region costs moto seconds (its EC2 backend is
# built then): pay it here, once, for the region most tests use.
ec2 = boto3.client('ec2', **kw)
warm = ec2.run_instances(ImageId=out['image_id'], MinCount=1, MaxCount=1)
ec2.terminate_instances(InstanceIds=[warm['Instances'][0]['InstanceId']])
# IAM authentication on from the next request.
ctx = None
if isinstance(verify, str):
    import ssl
    ctx = ssl.create_default_context(cafile=verify)
req = urllib.request.Request(endpoint + '/moto-api/reset-auth', data=b'0', method='POST',
                             headers={'Content-Type': 'text/plain'})
urllib.request.urlopen(req, context=ctx).read()
print(json.dumps(out))

_autorepair() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="autorepair"
                ;;
            autorepair,allow)
                cmd="autorepair__subcmd__allow"
                ;;
            autorepair,auto-repair)
                cmd="autorepair__subcmd__auto__subcmd__repair"
                ;;
            autorepair,clear)
                cmd="autorepair__subcmd__clear"
                ;;
            autorepair,explain)
                cmd="autorepair__subcmd__explain"
                ;;
            autorepair,generate)
                cmd="autorepair__subcmd__generate"
                ;;
            autorepair,help)
                cmd="autorepair__subcmd__help"
                ;;
            autorepair,repair)
                cmd="autorepair__subcmd__repair"
                ;;
            autorepair,report)
                cmd="autorepair__subcmd__report"
                ;;
            autorepair,request)
                cmd="autorepair__subcmd__request"
                ;;
            autorepair,resume)
                cmd="autorepair__subcmd__resume"
                ;;
            autorepair,run)
                cmd="autorepair__subcmd__run"
                ;;
            autorepair,sabakan)
                cmd="autorepair__subcmd__sabakan"
                ;;
            autorepair,simulate)
                cmd="autorepair__subcmd__simulate"
                ;;
            autorepair,snapshot)
                cmd="autorepair__subcmd__snapshot"
                ;;
            autorepair,status)
                cmd="autorepair__subcmd__status"
                ;;
            autorepair,suspend)
                cmd="autorepair__subcmd__suspend"
                ;;
            autorepair,tags)
                cmd="autorepair__subcmd__tags"
                ;;
            autorepair__subcmd__auto__subcmd__repair,disable)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__disable"
                ;;
            autorepair__subcmd__auto__subcmd__repair,enable)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__enable"
                ;;
            autorepair__subcmd__auto__subcmd__repair,get-variables)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__get__subcmd__variables"
                ;;
            autorepair__subcmd__auto__subcmd__repair,help)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help"
                ;;
            autorepair__subcmd__auto__subcmd__repair,is-enabled)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__auto__subcmd__repair,set-variables)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__set__subcmd__variables"
                ;;
            autorepair__subcmd__auto__subcmd__repair__subcmd__help,disable)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__disable"
                ;;
            autorepair__subcmd__auto__subcmd__repair__subcmd__help,enable)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__enable"
                ;;
            autorepair__subcmd__auto__subcmd__repair__subcmd__help,get-variables)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__get__subcmd__variables"
                ;;
            autorepair__subcmd__auto__subcmd__repair__subcmd__help,help)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__help"
                ;;
            autorepair__subcmd__auto__subcmd__repair__subcmd__help,is-enabled)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__auto__subcmd__repair__subcmd__help,set-variables)
                cmd="autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__set__subcmd__variables"
                ;;
            autorepair__subcmd__help,allow)
                cmd="autorepair__subcmd__help__subcmd__allow"
                ;;
            autorepair__subcmd__help,auto-repair)
                cmd="autorepair__subcmd__help__subcmd__auto__subcmd__repair"
                ;;
            autorepair__subcmd__help,clear)
                cmd="autorepair__subcmd__help__subcmd__clear"
                ;;
            autorepair__subcmd__help,explain)
                cmd="autorepair__subcmd__help__subcmd__explain"
                ;;
            autorepair__subcmd__help,generate)
                cmd="autorepair__subcmd__help__subcmd__generate"
                ;;
            autorepair__subcmd__help,help)
                cmd="autorepair__subcmd__help__subcmd__help"
                ;;
            autorepair__subcmd__help,repair)
                cmd="autorepair__subcmd__help__subcmd__repair"
                ;;
            autorepair__subcmd__help,report)
                cmd="autorepair__subcmd__help__subcmd__report"
                ;;
            autorepair__subcmd__help,request)
                cmd="autorepair__subcmd__help__subcmd__request"
                ;;
            autorepair__subcmd__help,resume)
                cmd="autorepair__subcmd__help__subcmd__resume"
                ;;
            autorepair__subcmd__help,run)
                cmd="autorepair__subcmd__help__subcmd__run"
                ;;
            autorepair__subcmd__help,sabakan)
                cmd="autorepair__subcmd__help__subcmd__sabakan"
                ;;
            autorepair__subcmd__help,simulate)
                cmd="autorepair__subcmd__help__subcmd__simulate"
                ;;
            autorepair__subcmd__help,snapshot)
                cmd="autorepair__subcmd__help__subcmd__snapshot"
                ;;
            autorepair__subcmd__help,status)
                cmd="autorepair__subcmd__help__subcmd__status"
                ;;
            autorepair__subcmd__help,suspend)
                cmd="autorepair__subcmd__help__subcmd__suspend"
                ;;
            autorepair__subcmd__help,tags)
                cmd="autorepair__subcmd__help__subcmd__tags"
                ;;
            autorepair__subcmd__help__subcmd__auto__subcmd__repair,disable)
                cmd="autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__disable"
                ;;
            autorepair__subcmd__help__subcmd__auto__subcmd__repair,enable)
                cmd="autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__enable"
                ;;
            autorepair__subcmd__help__subcmd__auto__subcmd__repair,get-variables)
                cmd="autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__get__subcmd__variables"
                ;;
            autorepair__subcmd__help__subcmd__auto__subcmd__repair,is-enabled)
                cmd="autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__help__subcmd__auto__subcmd__repair,set-variables)
                cmd="autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__set__subcmd__variables"
                ;;
            autorepair__subcmd__help__subcmd__repair,add)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__add"
                ;;
            autorepair__subcmd__help__subcmd__repair,delete)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__delete"
                ;;
            autorepair__subcmd__help__subcmd__repair,disable)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__disable"
                ;;
            autorepair__subcmd__help__subcmd__repair,enable)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__enable"
                ;;
            autorepair__subcmd__help__subcmd__repair,is-enabled)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__help__subcmd__repair,list)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__list"
                ;;
            autorepair__subcmd__help__subcmd__repair,reset-backoff)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__reset__subcmd__backoff"
                ;;
            autorepair__subcmd__help__subcmd__repair,wait)
                cmd="autorepair__subcmd__help__subcmd__repair__subcmd__wait"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,disable)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__disable"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,enable)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__enable"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,generate)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__generate"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,get-variables)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__get__subcmd__variables"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,history)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__history"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,is-enabled)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,set-variables)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__set__subcmd__variables"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,update)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__update"
                ;;
            autorepair__subcmd__help__subcmd__sabakan,validate-template)
                cmd="autorepair__subcmd__help__subcmd__sabakan__subcmd__validate__subcmd__template"
                ;;
            autorepair__subcmd__help__subcmd__tags,lint)
                cmd="autorepair__subcmd__help__subcmd__tags__subcmd__lint"
                ;;
            autorepair__subcmd__help__subcmd__tags,parse)
                cmd="autorepair__subcmd__help__subcmd__tags__subcmd__parse"
                ;;
            autorepair__subcmd__repair,add)
                cmd="autorepair__subcmd__repair__subcmd__add"
                ;;
            autorepair__subcmd__repair,delete)
                cmd="autorepair__subcmd__repair__subcmd__delete"
                ;;
            autorepair__subcmd__repair,disable)
                cmd="autorepair__subcmd__repair__subcmd__disable"
                ;;
            autorepair__subcmd__repair,enable)
                cmd="autorepair__subcmd__repair__subcmd__enable"
                ;;
            autorepair__subcmd__repair,help)
                cmd="autorepair__subcmd__repair__subcmd__help"
                ;;
            autorepair__subcmd__repair,is-enabled)
                cmd="autorepair__subcmd__repair__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__repair,list)
                cmd="autorepair__subcmd__repair__subcmd__list"
                ;;
            autorepair__subcmd__repair,reset-backoff)
                cmd="autorepair__subcmd__repair__subcmd__reset__subcmd__backoff"
                ;;
            autorepair__subcmd__repair,wait)
                cmd="autorepair__subcmd__repair__subcmd__wait"
                ;;
            autorepair__subcmd__repair__subcmd__help,add)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__add"
                ;;
            autorepair__subcmd__repair__subcmd__help,delete)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__delete"
                ;;
            autorepair__subcmd__repair__subcmd__help,disable)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__disable"
                ;;
            autorepair__subcmd__repair__subcmd__help,enable)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__enable"
                ;;
            autorepair__subcmd__repair__subcmd__help,help)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__help"
                ;;
            autorepair__subcmd__repair__subcmd__help,is-enabled)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__repair__subcmd__help,list)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__list"
                ;;
            autorepair__subcmd__repair__subcmd__help,reset-backoff)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__reset__subcmd__backoff"
                ;;
            autorepair__subcmd__repair__subcmd__help,wait)
                cmd="autorepair__subcmd__repair__subcmd__help__subcmd__wait"
                ;;
            autorepair__subcmd__sabakan,disable)
                cmd="autorepair__subcmd__sabakan__subcmd__disable"
                ;;
            autorepair__subcmd__sabakan,enable)
                cmd="autorepair__subcmd__sabakan__subcmd__enable"
                ;;
            autorepair__subcmd__sabakan,generate)
                cmd="autorepair__subcmd__sabakan__subcmd__generate"
                ;;
            autorepair__subcmd__sabakan,get-variables)
                cmd="autorepair__subcmd__sabakan__subcmd__get__subcmd__variables"
                ;;
            autorepair__subcmd__sabakan,help)
                cmd="autorepair__subcmd__sabakan__subcmd__help"
                ;;
            autorepair__subcmd__sabakan,history)
                cmd="autorepair__subcmd__sabakan__subcmd__history"
                ;;
            autorepair__subcmd__sabakan,is-enabled)
                cmd="autorepair__subcmd__sabakan__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__sabakan,set-variables)
                cmd="autorepair__subcmd__sabakan__subcmd__set__subcmd__variables"
                ;;
            autorepair__subcmd__sabakan,update)
                cmd="autorepair__subcmd__sabakan__subcmd__update"
                ;;
            autorepair__subcmd__sabakan,validate-template)
                cmd="autorepair__subcmd__sabakan__subcmd__validate__subcmd__template"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,disable)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__disable"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,enable)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__enable"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,generate)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__generate"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,get-variables)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__get__subcmd__variables"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,help)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__help"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,history)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__history"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,is-enabled)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__is__subcmd__enabled"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,set-variables)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__set__subcmd__variables"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,update)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__update"
                ;;
            autorepair__subcmd__sabakan__subcmd__help,validate-template)
                cmd="autorepair__subcmd__sabakan__subcmd__help__subcmd__validate__subcmd__template"
                ;;
            autorepair__subcmd__tags,help)
                cmd="autorepair__subcmd__tags__subcmd__help"
                ;;
            autorepair__subcmd__tags,lint)
                cmd="autorepair__subcmd__tags__subcmd__lint"
                ;;
            autorepair__subcmd__tags,parse)
                cmd="autorepair__subcmd__tags__subcmd__parse"
                ;;
            autorepair__subcmd__tags__subcmd__help,help)
                cmd="autorepair__subcmd__tags__subcmd__help__subcmd__help"
                ;;
            autorepair__subcmd__tags__subcmd__help,lint)
                cmd="autorepair__subcmd__tags__subcmd__help__subcmd__lint"
                ;;
            autorepair__subcmd__tags__subcmd__help,parse)
                cmd="autorepair__subcmd__tags__subcmd__help__subcmd__parse"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        autorepair)
            opts="-h -V --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help --version run status report explain tags suspend resume clear simulate generate sabakan snapshot repair auto-repair allow request help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__allow)
            opts="-h --now --timeout --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help none fix-storage migrate failover reinstall drain power-cycle reprovision check step-1 step-2 step-3 step-4 step-5 step-6 step-7 step-8"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help enable disable is-enabled set-variables get-variables help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__disable)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__enable)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__get__subcmd__variables)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help)
            opts="enable disable is-enabled set-variables get-variables help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__disable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__enable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__get__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__is__subcmd__enabled)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__help__subcmd__set__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__is__subcmd__enabled)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__auto__subcmd__repair__subcmd__set__subcmd__variables)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__clear)
            opts="-h --now --timeout --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__explain)
            opts="-o -h --json --output --now --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -W "json yaml wide name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "json yaml wide name" -- "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__generate)
            opts="-o -h --instances --seed --broken --contradictions --output --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --instances)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --broken)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help)
            opts="run status report explain tags suspend resume clear simulate generate sabakan snapshot repair auto-repair allow request help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__allow)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__auto__subcmd__repair)
            opts="enable disable is-enabled set-variables get-variables"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__disable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__enable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__get__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__is__subcmd__enabled)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__auto__subcmd__repair__subcmd__set__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__clear)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__explain)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__generate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair)
            opts="add list delete reset-backoff enable disable is-enabled wait"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__delete)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__disable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__enable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__is__subcmd__enabled)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__reset__subcmd__backoff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__repair__subcmd__wait)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__report)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__request)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__resume)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan)
            opts="validate-template generate update history set-variables get-variables enable disable is-enabled"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__disable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__enable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__generate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__get__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__history)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__is__subcmd__enabled)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__set__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__update)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__sabakan__subcmd__validate__subcmd__template)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__simulate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__snapshot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__suspend)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__tags)
            opts="parse lint"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__tags__subcmd__lint)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__help__subcmd__tags__subcmd__parse)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help add list delete reset-backoff enable disable is-enabled wait help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__add)
            opts="-h --now --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__delete)
            opts="-h --finished --unfinished --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__disable)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__enable)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help)
            opts="add list delete reset-backoff enable disable is-enabled wait help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__delete)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__disable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__enable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__is__subcmd__enabled)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__reset__subcmd__backoff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__help__subcmd__wait)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__is__subcmd__enabled)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__list)
            opts="-o -h --json --output --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -W "json yaml wide name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "json yaml wide name" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__reset__subcmd__backoff)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__repair__subcmd__wait)
            opts="-h --timeout --interval --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__report)
            opts="-h --html --now --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__request)
            opts="-h --now --timeout --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help fix-storage migrate failover reinstall drain power-cycle reprovision check step-1 step-2 step-3 step-4 step-5 step-6 step-7 step-8"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__resume)
            opts="-h --all --now --timeout --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__run)
            opts="-h --dry-run --now --loop --interval --leader-elect --lease --passes --max-pending --max-broken --json --metrics-file --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lease)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-pending)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-broken)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help validate-template generate update history set-variables get-variables enable disable is-enabled help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__disable)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__enable)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__generate)
            opts="-h --template --constraints --machines --sabakan --variables --nodes --kubeconfig --kube-context --now --json --config --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --template)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --variables)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__get__subcmd__variables)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help)
            opts="validate-template generate update history set-variables get-variables enable disable is-enabled help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__disable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__enable)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__generate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__get__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__history)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__is__subcmd__enabled)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__set__subcmd__variables)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__update)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__help__subcmd__validate__subcmd__template)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__history)
            opts="-h --json --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__is__subcmd__enabled)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__set__subcmd__variables)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__update)
            opts="-h --current --template --constraints --machines --sabakan --variables --nodes --kubeconfig --kube-context --now --json --write --dry-run --loop --interval --passes --metrics --apply-timeout --ready-command --config --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --current)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --template)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --variables)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --write)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --apply-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ready-command)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__sabakan__subcmd__validate__subcmd__template)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__simulate)
            opts="-h --passes --seed --scenarios --quiet-passes --replicas --json --verbose --now --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --passes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scenarios)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quiet-passes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replicas)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__snapshot)
            opts="-o -h --output --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__status)
            opts="-o -h --json --output --no-headers --now --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -W "json yaml wide name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "json yaml wide name" -- "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__suspend)
            opts="-h --until --for --all --now --timeout --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --until)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --for)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags)
            opts="-h --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help parse lint help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags__subcmd__help)
            opts="parse lint help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags__subcmd__help__subcmd__lint)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags__subcmd__help__subcmd__parse)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags__subcmd__lint)
            opts="-h --json --now --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        autorepair__subcmd__tags__subcmd__parse)
            opts="-h --json --config --kubeconfig --kube-context --lock-file --wait --log-json --log --rapi-user --rapi-password-file --rapi-ca --insecure --only-on-master --workload-secrets --out-of-service-taint --sabakan-ca --repair-config --constraints --nodes --etcd-ca --etcd-cert --etcd-key --cluster --rapi --kube-objects --kube --sabakan-file --sabakan --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-context)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lock-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repair-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --constraints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etcd-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rapi)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kube-objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sabakan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _autorepair -o nosort -o bashdefault -o default autorepair
else
    complete -F _autorepair -o bashdefault -o default autorepair
fi

# Object names, as kubectl completes them (`autorepair suspend <TAB>`: the fleet's objects): asked
# of autorepair itself, which reads the fleet the words typed name (a fleet file; a live fleet
# only if it answers within 2 seconds), writes nothing, takes no lock and prints nothing on
# any failure. Everything else completes as above.
_autorepair_objects() {
    local cur="${COMP_WORDS[COMP_CWORD]}" line alias_text reply
    local -a objects=() program=("${COMP_WORDS[0]}") files=()
    # Typed through an alias (the README's `alias autorepair=…/target/release/autorepair`),
    # the alias's command: a word run from a function is not alias-expanded.
    if alias_text=$(alias -- "${program[0]}" 2>/dev/null); then
        eval "program=(${alias_text#*=})"
    fi
    if [[ ${cur} != -* ]]; then
        while IFS= read -r line; do
            objects+=("${line}")
        done < <("${program[@]}" __complete-objects --line "${COMP_LINE:0:COMP_POINT}" 2>/dev/null </dev/null)
    fi
    if [[ ${#objects[@]} -gt 0 ]]; then
        COMPREPLY=("${objects[@]}")
        return 0
    fi
    # `--FLAG=FILE`: bash makes the `=` a word of its own, and clap's script completes
    # nothing after it (bash's file completion would then offer the lock too): the value
    # completes as it does after `--FLAG FILE`.
    local option="$3"
    if [[ ${option} == = && ${COMP_CWORD} -ge 2 ]]; then
        option=${COMP_WORDS[COMP_CWORD-2]}
    fi
    _autorepair "$1" "$2" "${option}"
    # A fleet file's lock (FILE.lock beside FILE) is offered only where a lock file is asked for.
    if [[ ${option} != --lock-file ]]; then
        for reply in "${COMPREPLY[@]}"; do
            [[ ${reply} == *.lock && " ${COMPREPLY[*]} " == *" ${reply%.lock} "* ]] || files+=("${reply}")
        done
        COMPREPLY=("${files[@]}")
    fi
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _autorepair_objects -o nosort -o bashdefault -o default autorepair
else
    complete -F _autorepair_objects -o bashdefault -o default autorepair
fi
